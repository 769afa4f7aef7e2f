"""A range's durability policy: what its master's commits wait for when no replica
acknowledges them (Vitess's durability policy, on MariaDB's semi-synchronous replication).

- ``strict`` (the default): a commit waits for a replica's acknowledgement with no end.
  With no replica to acknowledge, the range takes no write: the site gives up at its read
  timeout (503) and ends the session it left (``backends/mysql.py``). Every write a client
  saw acknowledged is on a replica, so a failover loses none.
- ``degrade-after Ns``: a commit waits at most N seconds (``rpl_semi_sync_master_timeout``);
  then the master commits asynchronously, until a replica has caught up and MariaDB waits
  for acknowledgements again by itself. The range keeps taking writes; those acknowledged
  meanwhile are on the master alone, and a failover before a replica caught up loses them.
  N is below the site's read timeout (10 s), or the site gives up first.

A range's entry in the shard map names its policy (``"durability": "degrade-after 5s"``);
one that names none is strict. ``shardstore durability`` changes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .exceptions import InvalidTopology

#: ``rpl_semi_sync_master_timeout`` for ever, in effect: no fallback to asynchronous.
NO_FALLBACK_MS = 18446744073709551615
#: The longest wait a degrading policy may name (seconds): past the site's read timeout,
#: every write would be a 503 before the master degraded.
MAX_DEGRADE_SECONDS = 9
#: The key of a range's entry in the shard map that names its policy.
KEY = "durability"
_DEGRADE = re.compile(r"degrade-after (\d+)s?")


@dataclass(frozen=True)
class Durability:
    """``strict`` (``degrade_after`` None) or ``degrade-after Ns``."""

    degrade_after: int | None = None

    @classmethod
    def parse(cls, text: object) -> Durability:
        """``"strict"`` or ``"degrade-after N"`` (``Ns`` too); InvalidTopology otherwise."""
        if text == "strict":
            return STRICT
        found = _DEGRADE.fullmatch(text) if isinstance(text, str) else None
        if found is None:
            raise InvalidTopology(f"durability {text!r}: strict, or degrade-after N (seconds)")
        seconds = int(found.group(1))
        if not 1 <= seconds <= MAX_DEGRADE_SECONDS:
            raise InvalidTopology(
                f"durability {text!r}: a range degrades after 1..{MAX_DEGRADE_SECONDS} s"
                " (the site gives up on a write after 10 s)"
            )
        return cls(seconds)

    @classmethod
    def of_entry(cls, entry: Mapping[str, Any]) -> Durability:
        """The policy a range's entry in the shard map names (strict if none)."""
        return cls.parse(entry.get(KEY, "strict"))

    def entry(self) -> dict[str, str]:
        """How a range's entry names it: nothing for strict, the default."""
        return {} if self.strict else {KEY: str(self)}

    @property
    def strict(self) -> bool:
        return self.degrade_after is None

    @property
    def timeout_ms(self) -> int:
        """The master's ``rpl_semi_sync_master_timeout``."""
        return NO_FALLBACK_MS if self.degrade_after is None else self.degrade_after * 1000

    def __str__(self) -> str:
        return "strict" if self.degrade_after is None else f"degrade-after {self.degrade_after}s"


STRICT = Durability()


def of_master(document: Mapping[str, Any], master: str) -> Durability:
    """The policy of the ranges a shard map document names ``master`` master of (a map
    gives all of one master's ranges the same); strict if it masters none."""
    for entry in document["ranges"]:
        if entry["master"] == master:
            return Durability.of_entry(entry)
    return STRICT
