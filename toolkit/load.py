"""A steady, bounded write and read load on the site, through its own HTTP API, that records
every write the site acknowledged, so that a drill can prove none of them was lost.

The drills (toolkit/drills/) break something under this load (a failover, a killed
server) and then ask two questions: was any acknowledged write lost, and how long
could the shards of each master not take a write? So:

* **Pinners** (``ensure_pinners``) are real accounts made through the API (sign-up,
  log-in for a token, a board, one pin), kept in a file so that later runs reuse them
  (sign-up and log-in are rate-limited). They land on random open shards. The load
  puts them in groups: by default the master of their shard in the map in force at the
  start (a split drill also tells the shards that move from those that stay), and
  wants a few in every group.
* **Writers** (a few threads per group) each post comments on their pinners' own pins
  (``POST /api/v1/pins/{id}/comments``): the comment, its listing and the token check
  all live on the pinner's shard, so a write touches one master only, and a 201 carries
  the new comment's ID. Each 2xx is an ``Ack`` (ID, shard, group, time). A 503 (with
  ``Retry-After``) or a connection error is *refused*: nothing was written, and the
  writer tries again after ``Retry-After``. Anything else is *failed*.
* **Readers** read comment pages and profiles of the same pinners, counted the same way.
* The load stops itself after ``max_seconds``, or when ``stop()`` is called.
* ``verify(store)`` reads every acknowledged comment back from MySQL (a ``Store`` on the
  shard map in force, no cache in between) and checks it is listed under its pin; any
  missing is *lost*. ``report()`` gives, per group, what was acknowledged, refused and
  failed, and the longest stretch with no acknowledged write on its shards: the
  unavailability window of those shards.

Every loop is bounded: by the load's deadline, by a retry cap, or by a count.
"""

from __future__ import annotations

import http.client
import io
import json
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from shardstore import StoreInterface, Topology, shard_of

API = "/api/v1"
#: How long one HTTP request may take before it counts as a connection error.
REQUEST_TIMEOUT = 10.0
#: The longest a writer sleeps on a ``Retry-After`` (the load must notice its own end).
MAX_RETRY_AFTER = 5.0
#: After a connection error or a failure, before the next attempt.
ERROR_PAUSE = 0.25
#: Comments are read back this many IDs at a time.
VERIFY_BATCH = 500


class SetupError(RuntimeError):
    """The load could not make or find its pinners (the site refused, or is not there)."""


# -- HTTP -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    status: int  # 0: no answer (connection refused, reset, timed out)
    body: bytes = b""
    retry_after: float | None = None

    def json(self) -> Any:
        return json.loads(self.body)


class Site:
    """The site's API at ``url`` (``http://127.0.0.1:PORT``), one keep-alive connection
    per thread."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"expected http://host:port, not {url!r}")
        self.url = url.rstrip("/")
        self.host, self.port = parts.hostname, parts.port or 80
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT)
            self._local.connection = connection
        return connection

    def close(self) -> None:
        """Close this thread's connection."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> Reply:
        """``METHOD /api/v1{path}``; ``body`` goes as JSON, ``raw`` as it is."""
        headers = {"Accept": "application/json", "X-Forwarded-Proto": "https"}
        if token is not None:
            headers["Authorization"] = f"Token {token}"
        payload = raw if raw is not None else None if body is None else json.dumps(body).encode()
        if payload is not None:
            headers["Content-Type"] = content_type
        # A kept-alive connection the server has closed meanwhile (gunicorn closes idle ones
        # after 2 s) fails before the request is read: then once more on a fresh one.
        for attempt in range(2):
            reused = getattr(self._local, "connection", None) is not None
            connection = self._connection()
            try:
                connection.request(method, API + path, body=payload, headers=headers)
                response = connection.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if reused and attempt == 0:
                    continue
                return Reply(0)
            except (OSError, http.client.HTTPException):
                self.close()
                return Reply(0)
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            retry = response.getheader("Retry-After")
            return Reply(response.status, data, float(retry) if retry and retry.isdigit() else None)
        return Reply(0)  # (not reached: the second attempt returns)


# -- pinners ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pinner:
    username: str
    password: str
    token: str
    user_id: int
    board_id: int
    pin_id: int


def _png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 40, 60)).save(out, format="PNG")
    return out.getvalue()


def _multipart(fields: dict[str, str], filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = f"drill{secrets.token_hex(12)}"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="image"; filename="{filename}"\r\n'
        "Content-Type: image/png\r\n\r\n".encode()
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _expect(reply: Reply, status: int, what: str) -> Any:
    if reply.status != status:
        raise SetupError(f"{what}: HTTP {reply.status or 'no answer'} {reply.body[:300]!r}")
    return reply.json() if reply.body else None


def make_pinner(site: Site, prefix: str = "drill") -> Pinner:
    """Sign a new pinner up through the API, log in, make a board and a pin."""
    username = f"{prefix}_{secrets.token_hex(6)}"
    password = f"Pw-{secrets.token_urlsafe(15)}"
    user = _expect(
        site.call(
            "POST",
            "/users",
            {"username": username, "email": f"{username}@example.com", "password": password},
        ),
        201,
        "sign-up",
    )
    token = _expect(
        site.call("POST", "/auth/token", {"username": username, "password": password}),
        200,
        "log-in",
    )["token"]
    board = _expect(
        site.call("POST", "/boards", {"name": "Drill board"}, token=token), 201, "new board"
    )
    body, content_type = _multipart({"board_id": board["id"]}, "drill.png", _png())
    pin = _expect(
        site.call("POST", "/pins", raw=body, content_type=content_type, token=token),
        201,
        "new pin",
    )
    return Pinner(username, password, token, int(user["id"]), int(board["id"]), int(pin["id"]))


Group = Callable[[Pinner], str]


def by_master(topology: Topology) -> Group:
    """Pinners grouped by the master of their shard in ``topology`` (the default)."""
    return lambda pinner: topology.master_of(shard_of(pinner.user_id))


def ensure_pinners(
    site: Site,
    path: Path,
    topology: Topology,
    *,
    per_group: int,
    group: Group | None = None,
    groups: Iterable[str] | None = None,
    max_new: int = 40,
) -> list[Pinner]:
    """At least ``per_group`` pinners in each of ``groups`` (by default: on each master
    that takes new pinners): those kept in ``path`` that still work, and new ones (at most
    ``max_new``) until there are enough. Sign-ups land on random open shards."""
    label = group or by_master(topology)
    kept: list[Pinner] = []
    if path.exists():
        for entry in json.loads(path.read_text()):
            pinner = Pinner(**entry)
            if site.call("GET", "/me", token=pinner.token).status == 200:
                kept.append(pinner)
    if groups is None:  # a master with no open shard keeps the pinners it has
        groups = {topology.master_of(s) for s in _open_shards(topology)}
    wanted = sorted(groups)
    count = Counter(label(p) for p in kept)
    made = 0
    while any(count[g] < per_group for g in wanted):
        if made >= max_new:
            short = {g: per_group - count[g] for g in wanted if count[g] < per_group}
            raise SetupError(f"{made} new pinners still leave groups short: {short}")
        pinner = make_pinner(site)
        made += 1
        kept.append(pinner)
        count[label(pinner)] += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(p) for p in kept], indent=1))
    return kept


def _open_shards(topology: Topology) -> Iterable[int]:
    """Every open shard (a pinner signs up on one of them)."""
    for first, last in topology.open_ranges:
        for r in topology.ranges:
            yield from range(max(first, r.first), min(last, r.last) + 1)


# -- the load ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Ack:
    """An acknowledged write: the comment's ID, its pin and shard, the group of its pinner
    (by default the master of the shard when the load began), and when the 2xx arrived
    (``time.monotonic()``)."""

    comment_id: int
    pin_id: int
    shard: int
    group: str
    at: float


@dataclass
class Tally:
    """What one group's shards answered."""

    acked: int = 0
    refused: int = 0  # 503 + Retry-After, or no answer: nothing written, tried again
    failed: int = 0  # any other answer
    reads: int = 0
    reads_refused: int = 0
    reads_failed: int = 0
    statuses: Counter[int] = field(default_factory=Counter)  # of refusals and failures

    @property
    def errors(self) -> int:
        return self.refused + self.failed + self.reads_refused + self.reads_failed


@dataclass
class GroupReport:
    group: str
    tally: Tally
    longest_gap: float  # seconds without an acknowledged write on these shards
    gap_began: float  # seconds after the load began
    lost: int | None = None  # None until verified


@dataclass
class LoadReport:
    seconds: float
    groups: dict[str, GroupReport]

    @property
    def acked(self) -> int:
        return sum(g.tally.acked for g in self.groups.values())

    @property
    def lost(self) -> int:
        return sum(g.lost or 0 for g in self.groups.values())

    def errors(self, *groups: str) -> int:
        """Refusals and failures, writes and reads, of these groups."""
        return sum(self.groups[g].tally.errors for g in groups if g in self.groups)

    def lines(self) -> list[str]:
        out = [f"load: {self.seconds:.1f} s, {self.acked} writes acknowledged, {self.lost} lost"]
        for name, g in sorted(self.groups.items()):
            t = g.tally
            codes = ", ".join(f"{k or 'no answer'}: {v}" for k, v in sorted(t.statuses.items()))
            out.append(
                f"  shards of {name}: {t.acked} acknowledged, {g.lost} lost, {t.refused} refused,"
                f" {t.failed} failed; reads {t.reads} ok, {t.reads_refused} refused,"
                f" {t.reads_failed} failed{f' ({codes})' if codes else ''};"
                f" longest gap {g.longest_gap:.2f} s (from +{g.gap_began:.1f} s)"
            )
        return out


class Load:
    """Writers and readers over ``pinners``, in groups (by default the master of each
    pinner's shard in ``topology``): ``writers_per_group`` writer threads per group."""

    def __init__(
        self,
        site: Site,
        pinners: Sequence[Pinner],
        topology: Topology,
        *,
        group: Group | None = None,
        writers_per_group: int = 3,
        readers: int = 2,
        pause: float = 0.02,
        max_seconds: float = 120.0,
    ) -> None:
        self.site = site
        self.pause = pause
        self.max_seconds = max_seconds
        label = group or by_master(topology)
        self.pinners: dict[str, list[Pinner]] = {}
        for pinner in pinners:
            self.pinners.setdefault(label(pinner), []).append(pinner)
        #: The groups this load writes for: those with some of its pinners.
        self.groups = sorted(self.pinners)
        self.acks: list[Ack] = []
        self.tallies = {g: Tally() for g in self.groups}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._n = 0
        for name in self.groups:
            for i in range(writers_per_group):
                mine = self.pinners[name][i::writers_per_group] or self.pinners[name]
                self._threads.append(
                    threading.Thread(
                        target=self._write, args=(name, mine), name=f"write-{name}-{i}"
                    )
                )
        everyone = [(g, p) for g in self.groups for p in self.pinners[g]]
        for i in range(readers):
            self._threads.append(
                threading.Thread(target=self._read, args=(everyone[i::readers],), name=f"read-{i}")
            )
        self.started = 0.0
        self.ended = 0.0

    # -- running ---------------------------------------------------------------------

    def start(self) -> Load:
        self.started = time.monotonic()
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> LoadReport:
        """Stop every thread (each finishes its request) and report. Stopping again only
        reports."""
        if not self.ended:
            self._stop.set()
            for thread in self._threads:
                thread.join(REQUEST_TIMEOUT + MAX_RETRY_AFTER + 5)
            self.ended = time.monotonic()
        return self.report()

    def wait(self, seconds: float) -> None:
        """Let the load run ``seconds`` more (or until it ends by itself)."""
        self._stop.wait(max(0.0, min(seconds, self._deadline() - time.monotonic())))

    def acked_since(self, moment: float, group: str) -> int:
        with self._lock:
            return sum(1 for a in self.acks if a.group == group and a.at >= moment)

    def acks_after(self, moment: float) -> list[Ack]:
        with self._lock:
            return [a for a in self.acks if a.at > moment]

    def times(self, group: str) -> list[float]:
        """When each of the group's writes was acknowledged."""
        with self._lock:
            return [a.at for a in self.acks if a.group == group]

    def _deadline(self) -> float:
        return self.started + self.max_seconds

    def _running(self) -> bool:
        return not self._stop.is_set() and time.monotonic() < self._deadline()

    def _sleep(self, seconds: float) -> None:
        self._stop.wait(max(0.0, min(seconds, self._deadline() - time.monotonic())))

    def _write(self, group: str, pinners: list[Pinner]) -> None:
        tally, turn = self.tallies[group], 0
        try:
            while self._running():
                pinner = pinners[turn % len(pinners)]
                turn += 1
                with self._lock:
                    self._n += 1
                    n = self._n
                reply = self.site.call(
                    "POST", f"/pins/{pinner.pin_id}/comments", {"text": f"c{n}"}, token=pinner.token
                )
                if 200 <= reply.status < 300:
                    comment_id = int(reply.json()["id"])
                    ack = Ack(comment_id, pinner.pin_id, shard_of(comment_id), group, time.monotonic())  # fmt: skip
                    with self._lock:
                        self.acks.append(ack)
                        tally.acked += 1
                    self._sleep(self.pause)
                    continue
                with self._lock:
                    tally.statuses[reply.status] += 1
                    if reply.status in (0, 503):
                        tally.refused += 1
                    else:
                        tally.failed += 1
                if reply.status == 503 and reply.retry_after is not None:
                    self._sleep(min(reply.retry_after, MAX_RETRY_AFTER))
                else:
                    self._sleep(ERROR_PAUSE)
        finally:
            self.site.close()

    def _read(self, pinners: list[tuple[str, Pinner]]) -> None:
        turn = 0
        try:
            while self._running() and pinners:
                group, pinner = pinners[turn % len(pinners)]
                path = (
                    f"/pins/{pinner.pin_id}/comments?limit=10"
                    if turn % 2 == 0
                    else f"/users/{pinner.user_id}"
                )
                turn += 1
                reply = self.site.call("GET", path)
                tally = self.tallies[group]
                with self._lock:
                    if reply.status == 200:
                        tally.reads += 1
                    else:
                        tally.statuses[reply.status] += 1
                        if reply.status in (0, 503):
                            tally.reads_refused += 1
                        else:
                            tally.reads_failed += 1
                self._sleep(self.pause if reply.status == 200 else ERROR_PAUSE)
        finally:
            self.site.close()

    # -- what it saw ---------------------------------------------------------------------

    def report(self, lost: dict[str, int] | None = None) -> LoadReport:
        end = self.ended or time.monotonic()
        groups = {}
        with self._lock:
            for name in self.groups:
                times = [a.at for a in self.acks if a.group == name]
                gap, began = longest_gap(times, self.started, end)
                groups[name] = GroupReport(
                    name,
                    self.tallies[name],
                    gap,
                    began - self.started,
                    None if lost is None else lost.get(name, 0),
                )
        return LoadReport(end - self.started, groups)

    def verify(self, store: StoreInterface) -> LoadReport:
        """Read every acknowledged comment back (``store``: on the shard map in force, with
        no cache) and count, per group, those missing or not listed under their pin."""
        with self._lock:
            acks = list(self.acks)
        lost: Counter[str] = Counter()
        for batch in _batches(acks, VERIFY_BATCH):
            found = {
                int(c["id"])
                for c in store.objects("comment").get_many([a.comment_id for a in batch])
            }
            by_pin: dict[int, list[Ack]] = {}
            for ack in batch:
                by_pin.setdefault(ack.pin_id, []).append(ack)
            listed: set[int] = set()
            for pin_id, pin_acks in by_pin.items():
                listed.update(
                    store.mapping("pin_has_comments").filter(
                        pin_id, [a.comment_id for a in pin_acks]
                    )
                )
            for ack in batch:
                if ack.comment_id not in found or ack.comment_id not in listed:
                    lost[ack.group] += 1
        return self.report({g: lost[g] for g in self.groups})


def longest_gap(times: Iterable[float], start: float, end: float) -> tuple[float, float]:
    """The longest stretch of ``[start, end]`` with none of ``times`` in it, and where it
    began: the edges count, so shards that never answered again show the whole tail."""
    points = [start, *sorted(t for t in times if start <= t <= end), end]
    best, began = 0.0, start
    for before, after in pairwise(points):
        if after - before > best:
            best, began = after - before, before
    return best, began


def _batches(items: Sequence[Ack], size: int) -> Iterable[Sequence[Ack]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
