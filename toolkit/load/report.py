"""What a load saw: each acknowledged write (``Ack``), what each group's shards answered
(``Tally``), and the report of a run, with the longest stretch of each group's shards
without an acknowledged write."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise


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


def longest_gap(times: Iterable[float], start: float, end: float) -> tuple[float, float]:
    """The longest stretch of ``[start, end]`` with none of ``times`` in it, and where it
    began: the edges count, so shards that never answered again show the whole tail."""
    points = [start, *sorted(t for t in times if start <= t <= end), end]
    best, began = 0.0, start
    for before, after in pairwise(points):
        if after - before > best:
            best, began = after - before, before
    return best, began
