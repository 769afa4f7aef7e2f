"""The data both builds serve: pinners, boards, pins, follows, likes and comments, loaded in
bulk into pinboard's shards (bench/bulkload.py) and grown in steps (10k, 100k, 1M pins).

A few pinners are *probes*: their boards get all their pins at the first step, with the
newest timestamps, and they follow only each other and each other's boards. Later steps
add older pins to the other pinners' boards only, so a probe's profile, board pages and
home feed show the same content at every size: what grows is only the data around them,
which is what a p50 against data size must isolate.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bench.bulkload import (
    DAY,
    Loader,
    load_follows,
    load_pinners,
    load_pins,
    load_reactions,
)

from .stack import Stack

#: Pins on a probe's first board (a full page of 50, and more), and on each other board.
PROBE_BOARD_PINS = 60
PROBE_OTHER_PINS = 5


@dataclass
class Dataset:
    stack: Stack
    rng: random.Random
    image: dict[str, Any]  # one stored image, shared by every pin
    loader: Loader
    owner_of: dict[int, int] = field(default_factory=dict)  # board -> pinner
    usernames: dict[int, str] = field(default_factory=dict)  # pinner -> username
    slugs: dict[int, str] = field(default_factory=dict)  # board -> slug
    probes: list[int] = field(default_factory=list)  # pinner IDs
    probe_pins: list[int] = field(default_factory=list)
    pins: list[int] = field(default_factory=list)  # every pin
    now: int = field(default_factory=lambda: time.time_ns() // 1000)

    @property
    def probe_boards(self) -> list[int]:
        probes = set(self.probes)
        return [b for b, owner in self.owner_of.items() if owner in probes]

    def first(self, *, pinners: int, boards_per_pinner: int, probes: int, pins: int) -> None:
        """Pinners, their boards and follows, the probes' pins, and others up to ``pins``."""
        from django.contrib.auth.hashers import make_password

        owner_of, usernames = load_pinners(
            self.loader, self.stack.topology, self.rng, users=pinners,
            boards_per_user=boards_per_pinner, password=make_password("pinboard-bench"),
            now=self.now,
        )  # fmt: skip
        self.owner_of, self.usernames = owner_of, usernames
        self.slugs = self._slugs()
        self.probes = self.rng.sample(list(usernames), probes)
        probe_set = set(self.probes)
        plan: Counter[int] = Counter()
        boards_of: dict[int, list[int]] = {}
        for board, owner in owner_of.items():
            boards_of.setdefault(owner, []).append(board)
        for pinner in self.probes:
            boards = boards_of[pinner]
            plan[boards[0]] = PROBE_BOARD_PINS
            plan.update(dict.fromkeys(boards[1:], PROBE_OTHER_PINS))
        recent = (self.now - 30 * DAY, self.now - DAY)
        self.probe_pins = load_pins(
            self.loader, plan, owner_of, self.image, self.rng, window=recent, label="probes"
        )
        others = [u for u in usernames if u not in probe_set]
        load_follows(
            self.loader, self.rng, self.probes, self.probes,
            {b: owner_of[b] for b in self.probe_boards}, follows=20, board_follows=5,
            window=recent,
        )  # fmt: skip
        load_follows(
            self.loader, self.rng, others, list(usernames), owner_of, follows=20,
            board_follows=5, window=recent,
        )  # fmt: skip
        load_reactions(
            self.loader, self.rng, usernames, self.probe_pins, likes=10 * len(self.probe_pins),
            comments=len(self.probe_pins), window=recent,
        )  # fmt: skip
        self.pins = list(self.probe_pins)
        self.grow(pins)
        self.stack.rebuild_redis()
        self.stack.clear_caches()  # the rows went around the cache pools

    def grow(self, pins: int) -> None:
        """Older pins on the other pinners' boards until there are ``pins``, with likes
        (one per 10 pins) and comments (one per 50)."""
        more = pins - len(self.pins)
        if more <= 0:
            return
        probe_set = set(self.probes)
        boards = [b for b, owner in self.owner_of.items() if owner not in probe_set]
        old = (self.now - 365 * DAY, self.now - 30 * DAY)
        self.loader.new_phase()
        made = load_pins(
            self.loader, Counter(self.rng.choices(boards, k=more)), self.owner_of, self.image,
            self.rng, window=old, label=f"to {pins:,}",
        )  # fmt: skip
        load_reactions(
            self.loader, self.rng, self.usernames, made, likes=more // 10, comments=more // 50,
            window=old,
        )  # fmt: skip
        self.pins += made
        self.stack.clear_caches()  # the rows went around the cache pools

    def _slugs(self) -> dict[int, str]:
        from pinboard.boards.queries import get_boards

        found = {}
        ids = list(self.owner_of)
        for start in range(0, len(ids), 500):
            for board in get_boards(ids[start : start + 500]):
                found[board["id"]] = board["slug"]
        return found
