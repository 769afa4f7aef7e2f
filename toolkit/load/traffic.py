"""The load itself: writer and reader threads over the pinners, group by group, each answer
counted, each acknowledged write recorded, and every one of them read back at the end."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence

from shardstore import StoreInterface, Topology, shard_of
from toolkit.load.api import REQUEST_TIMEOUT, Site
from toolkit.load.pinners import Group, Pinner, by_master
from toolkit.load.report import Ack, GroupReport, LoadReport, Tally, longest_gap

#: The longest a writer sleeps on a ``Retry-After`` (the load must notice its own end).
MAX_RETRY_AFTER = 5.0
#: After a connection error or a failure, before the next attempt.
ERROR_PAUSE = 0.25
#: Comments are read back this many IDs at a time.
VERIFY_BATCH = 500


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
        self.read_times: list[tuple[float, float]] = []  # (when it began, seconds) of each read
        #: (group, when it began, seconds, status) of each write, answered or not.
        self.write_times: list[tuple[str, float, float, int]] = []
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

    def read_p99(self, start: float, end: float) -> float:
        """The 99th percentile of the seconds a read took, of those begun in [start, end)."""
        with self._lock:
            took = sorted(s for at, s in self.read_times if start <= at < end)
        return took[min(len(took) - 1, int(len(took) * 0.99))] if took else 0.0

    def writes_between(self, group: str, start: float, end: float) -> list[tuple[float, int]]:
        """(seconds, status) of the group's writes begun in [start, end)."""
        with self._lock:
            return [(s, status) for g, at, s, status in self.write_times if g == group and start <= at < end]  # fmt: skip

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
                began = time.monotonic()
                reply = self.site.call(
                    "POST", f"/pins/{pinner.pin_id}/comments", {"text": f"c{n}"}, token=pinner.token
                )
                with self._lock:
                    self.write_times.append((group, began, time.monotonic() - began, reply.status))
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
                began = time.monotonic()
                reply = self.site.call("GET", path)
                tally = self.tallies[group]
                with self._lock:
                    if reply.status == 200:
                        tally.reads += 1
                        self.read_times.append((began, time.monotonic() - began))
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
        lost = Counter(ack.group for ack in self.missing(store))
        return self.report({g: lost[g] for g in self.groups})

    def missing(self, store: StoreInterface) -> list[Ack]:
        """The acknowledged comments ``store`` does not have, or has not listed under their pin."""
        with self._lock:
            acks = list(self.acks)
        gone: list[Ack] = []
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
            gone += [ack for ack in batch if ack.comment_id not in found or ack.comment_id not in listed]  # fmt: skip
        return gone


def _batches(items: Sequence[Ack], size: int) -> Iterable[Sequence[Ack]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
