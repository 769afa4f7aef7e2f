"""``ProcessWide``: one object a process makes once, however many threads ask; and a forked
process makes its own rather than use its parent's (whose connections it would share)."""

from __future__ import annotations

import os
import threading

from pinboard.process_wide import ProcessWide


def test_the_object_is_made_once_for_every_thread() -> None:
    made: list[object] = []

    def make() -> object:
        made.append(object())
        return made[-1]

    shared = ProcessWide(make)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(shared.get())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and all(got is made[0] for got in seen)


def test_a_forked_process_makes_its_own() -> None:
    shared = ProcessWide(lambda: os.getpid())
    assert shared.get() == os.getpid()
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its own object, not the one it inherited
        os.write(writing, str(shared.get()).encode())
        os._exit(0)
    os.close(writing)
    told = os.read(reading, 64).decode()
    os.close(reading)
    os.waitpid(child, 0)
    assert told == str(child)
    assert shared.get() == os.getpid()  # the parent keeps its own
