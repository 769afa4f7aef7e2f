"""The Celery drill: the worker is killed (``kill -9``) in the middle of a fan-out, started
again, and every home feed ends up with every pin exactly once.

Set-up (made once, kept in ``drills/fanout.json`` beside the cluster): an author (a pinner
made through the API) followed by ``FOLLOWERS`` pinners, made with the site's own code in
this process (``follow_user``; sign-up through the API is rate-limited and hashes a
password per pinner), so each pin the author posts fans out in several batches of 1,000.

The drill marks every follower as a recent visitor (fan-out skips the others), then saves
``PINS`` pins on the author's board with the site's own action (``save_pin``, which queues
the fan-out on the broker) from a thread, and kills the worker as soon as the first of
them reaches a follower's feed: the fan-out is under way, more is queued, and the tasks
the worker held are unacknowledged. The worker is started again. Its tasks come back once
the broker's visibility timeout has passed since they were taken
(``PINBOARD_BROKER_VISIBILITY_TIMEOUT``, then up to ``unacked_restore_interval``), and a
task the broker lost outright (taken off its queue, not yet written down as held, when the
worker died) is sent again by the task ledger's sweep (pinboard/ledger.py) a little later:
the drill waits for that, bounded. Then every follower's feed must hold each of the pins
exactly once (a batch run twice, once by the killed worker and again after, must not push
twice: each batch claims itself in Redis).
"""

from __future__ import annotations

import importlib
import json
import secrets
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit.load.pinners import Pinner, make_pinner

from .base import SETTLE, DrillError, Drills, Result

FOLLOWERS = 2500
PINS = 40
SERVER = "worker"
#: How long the first pin may take to reach a feed once the pins are saved.
FIRST_PUSH_SECONDS = 60.0
#: How long the drill waits, once the fan-out has begun, for the worker to hold a task.
HELD_SECONDS = 5.0
#: Beyond the visibility timeout and the restore interval, how long the fan-out may take
#: (a lost task is sent again by the ledger's sweep within its margin of these).
FINISH_SECONDS = 120.0
#: The longest visibility timeout the drill waits out.
MAX_VISIBILITY = 300


def fanout(d: Drills, result: Result) -> None:
    import redis

    process = d.process(SERVER)
    visibility = int(d.env.get("PINBOARD_BROKER_VISIBILITY_TIMEOUT", "1200"))
    if visibility > MAX_VISIBILITY:
        raise DrillError(
            f"the broker gives a dead worker's tasks back after {visibility} s"
            f" (PINBOARD_BROKER_VISIBILITY_TIMEOUT); the drill waits at most {MAX_VISIBILITY} s"
        )
    restore_interval = min(10, visibility)
    result.title = f"Celery {SERVER} killed mid fan-out ({PINS} pins to {FOLLOWERS} followers)"
    topology = d.topology()
    load = d.load(topology)
    d.django()
    author, followers = _audience(d, d.dir / "fanout.json")
    feeds = _feeds()
    for follower in [*followers, author.user_id]:
        feeds.mark_seen(follower)
    broker = redis.Redis.from_url(d.env["PINBOARD_BROKER_URL"])
    watched = followers[0]  # the kill comes once a pin reaches this feed
    audience = [*followers, author.user_id]

    saved: list[int] = []
    failures: list[BaseException] = []
    poster = threading.Thread(target=_post, args=(author, saved, failures), name="post")
    d.say(f"saving {PINS} pins; kill -9 the worker once the fan-out has begun")
    began = time.monotonic()
    poster.start()
    first = _wait_first_push(feeds, watched, saved, began + FIRST_PUSH_SECONDS)
    if first is None:
        poster.join()
        load.stop()
        raise DrillError(f"no pin reached a feed within {FIRST_PUSH_SECONDS:g} s: is the worker working?")  # fmt: skip
    held = _wait_held(broker, time.monotonic() + HELD_SECONDS)
    children = _children(process.pid)
    process.halt(kill=True)
    killed = time.monotonic()
    queued = broker.llen("celery")
    poster.join()
    if failures:
        raise DrillError(f"saving a pin failed: {failures[0]!r}")
    pushed = sum(1 for _s, pin in feeds.entries(watched) if pin in set(saved))
    result.figure(
        f"killed {killed - began:.1f} s after the first save: tasks held by the worker {held},"
        f" queued {queued}; {pushed} of {PINS} pins had reached the first follower"
    )
    orphans = _wait_gone(children, 15)
    result.figure(f"pool processes of the killed worker: {len(children)}, still running after 15 s: {orphans}")  # fmt: skip

    d.say(f"restart the worker; wait up to {visibility + restore_interval:g} s for the held tasks")
    process.restart()
    deadline = killed + visibility + restore_interval + FINISH_SECONDS
    done_at = _wait_complete(feeds, broker, audience, set(saved), deadline)
    result.figure(
        f"all {len(audience)} feeds complete and the broker empty"
        + (f" {done_at - killed:.1f} s after the kill" if done_at else " NOT within the bound")
        + f" (visibility timeout {visibility} s)"
    )
    lost, duplicates = _verify(feeds, audience, set(saved))
    if lost:
        result.figure(f"missing (pinner, pin): {', '.join(map(str, lost[:5]))}")
    load.wait(SETTLE)
    d.finish(result, load)
    result.bound("the kill caught tasks in flight", held > 0, f"{held} held")
    result.bound("feed entries lost", not lost, f"{len(lost)} of {len(saved) * len(audience)}")
    result.bound("duplicate feed entries", duplicates == 0, duplicates)


def _site(module: str) -> Any:
    """A module of the site (imported by name: the site's code is not type-checked with the
    toolkit's)."""
    return importlib.import_module(f"pinboard.{module}")


def _feeds() -> Any:
    return _site("data_plane").get_feeds()


def _audience(d: Drills, path: Path) -> tuple[Pinner, list[int]]:
    """The author and their followers: those kept in ``path`` if the cluster still has them,
    or new ones."""
    get_user = _site("users.queries").get_user
    if path.exists():
        kept = json.loads(path.read_text())
        author = Pinner(**kept["author"])
        followers = [int(f) for f in kept["followers"]]
        if d.site.call("GET", "/me", token=author.token).status == 200 and get_user(followers[-1]):
            graph = _site("data_plane").get_graph()
            count = sum(len(c) for c in graph.board_followers(author.board_id, author.user_id))
            if count < len(followers):
                raise DrillError(
                    f"the follower graph holds {count} of the author's {len(followers)}"
                    " followers: run `manage.py follower_graph repair`"
                )
            return author, followers
    d.say(f"making an author and {FOLLOWERS} followers (once)")
    author = make_pinner(d.site, "author")
    followers = _make_followers(author.user_id, FOLLOWERS)
    path.write_text(json.dumps({"author": asdict(author), "followers": followers}))
    return author, followers


def _make_followers(author_id: int, count: int) -> list[int]:
    follow_user = _site("follows.actions").follow_user
    store = _site("data_plane").cached_store()

    def one(_n: int) -> int:
        username = f"fan_{secrets.token_hex(6)}"
        email = f"{username}@example.com"
        user_id: int = store.objects("user").create(
            store.new_user_shard(),
            {
                "username": username,
                "email": email,
                "password": "!",  # no password: cannot log in
                "about": "",
                "created_at": datetime.now(UTC).isoformat(),
            },
        )
        store.lookup("username").insert(username, user_id)
        store.lookup("email").insert(email, user_id)
        follow_user(user_id, author_id)
        return user_id

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(one, range(count)))


def _post(author: Pinner, saved: list[int], failures: list[BaseException]) -> None:
    save_pin = _site("pins.actions").save_pin
    try:
        for _n in range(PINS):
            saved.append(int(save_pin(author.user_id, author.pin_id, author.board_id)["id"]))
    except BaseException as error:  # noqa: BLE001 - reported by the drill
        failures.append(error)


def _wait_first_push(feeds: Any, user: int, saved: list[int], deadline: float) -> float | None:
    while time.monotonic() < deadline:
        pins = set(saved)
        if pins and any(pin in pins for _s, pin in feeds.entries(user)):
            return time.monotonic()
        time.sleep(0.01)
    return None


def _wait_held(broker: Any, deadline: float) -> int:
    """How many tasks the worker holds (delivered, not acknowledged), once it holds some:
    between two tasks it may hold none for a moment, and a kill then would test nothing."""
    while (held := int(broker.hlen("unacked"))) == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    return held


def _wait_complete(
    feeds: Any, broker: Any, users: list[int], pins: set[int], deadline: float
) -> float | None:
    """When the broker is empty and every one of ``users``' feeds holds every pin (a batch
    may still be running after the broker looks empty: it is checked feed by feed)."""
    while time.monotonic() < deadline:
        idle = broker.llen("celery") == 0 and broker.hlen("unacked") == 0
        if idle and not _verify(feeds, users, pins)[0]:
            return time.monotonic()
        time.sleep(1.0)
    return None


def _verify(feeds: Any, users: list[int], pins: set[int]) -> tuple[list[tuple[int, int]], int]:
    """The (pinner, pin) entries missing from the feeds of ``users``, and how many entries
    are there more than once."""
    lost: list[tuple[int, int]] = []
    duplicates = 0
    for user in users:
        counts = Counter(pin for _s, pin in feeds.entries(user))
        lost += [(user, pin) for pin in sorted(pins) if counts[pin] == 0]
        duplicates += sum(n - 1 for n in counts.values() if n > 1)
    return lost, duplicates


def _children(pid: int | None) -> list[int]:
    if pid is None:
        return []
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _wait_gone(pids: list[int], seconds: float) -> int:
    """Wait (bounded) for the killed worker's pool processes to end; how many still run."""
    deadline = time.monotonic() + seconds
    while True:
        running = [p for p in pids if Path(f"/proc/{p}").exists()]
        if not running or time.monotonic() > deadline:
            return len(running)
        time.sleep(0.2)
