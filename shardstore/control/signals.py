"""How the operator's signals reach a run of a plan (plans.py): SIGTERM and SIGINT stop a
step, and are held off while it is undone; and where a run stops itself for the fault
injector: ``SHARDSTORE_STOP_AFTER_STEP=N`` in the environment makes a run stop itself
(SIGSTOP) once step N is journaled, and ``SHARDSTORE_STOP_IN_STEP=N`` once step N has
run but before it is journaled; toolkit/nemesis/ then kills it with SIGKILL there,
exactly, to prove that ``abort`` and ``resume`` recover from any step."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

#: The environment variables that stop a run after a step is journaled, or after it ran
#: but before it is journaled, for fault injection.
STOP_AFTER_STEP = "SHARDSTORE_STOP_AFTER_STEP"
STOP_IN_STEP = "SHARDSTORE_STOP_IN_STEP"


class Interrupted(BaseException):
    """The operator's process was told to stop (SIGTERM): undo, then stop."""


def stop_here(variable: str, index: int) -> None:
    """Fault injection: stop this process (SIGSTOP) where ``variable`` says."""
    if os.environ.get(variable) == str(index):
        os.kill(os.getpid(), signal.SIGSTOP)


def _raise_interrupted(signum: int, frame: Any) -> None:
    raise Interrupted(signal.Signals(signum).name)


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGTERM raises ``Interrupted`` in the steps (SIGINT raises KeyboardInterrupt), so a
    stopped command undoes its work. Signals reach the main thread only: elsewhere (a
    console action's worker thread) this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """While undoing: SIGINT and SIGTERM are noted, not obeyed, until the undo is done."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    handlers = {
        signum: signal.signal(signum, lambda signum, frame: received.append(signum))
        for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
