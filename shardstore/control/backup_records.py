"""What the backups leave in the config source for the metrics, the alerts and the console
(records of kind ``backups``, as the guard's are ``guard``): each range's newest backup
(``taken``), each master's archive (``archived``: when it last held everything the master
had logged), each range's last verification (``verified``) and the backups asked for
(``requested``: the console's "back up now", ``backup request``), which the range's
backup timer takes at its next run (``backup take --if-due``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..backups.manifest import Manifest
from .config_source import ConfigSource

KIND = "backups"


def taken(source: ConfigSource, made: Manifest) -> None:
    """Record ``made`` as the newest backup of each range it holds."""
    kept = source.recorded(KIND, "taken") or {}
    entry = {"backup": f"{made.host}/{made.name}", "ended": made.ended, "size": made.size}
    spans = [span.strip() for span in made.ranges.split(",") if span.strip()]
    source.record(KIND, "taken", {**kept, **dict.fromkeys(spans, entry)})


def archived(source: ConfigSource, caught_up: dict[str, float]) -> None:
    """Record, for each master archived, when its archive last held all it had logged."""
    kept = source.recorded(KIND, "archived") or {}
    source.record(KIND, "archived", {**kept, **caught_up})


def verified(source: ConfigSource, span: str, outcome: dict[str, Any]) -> None:
    kept = source.recorded(KIND, "verified") or {}
    source.record(KIND, "verified", {**kept, span: outcome})


def requested(source: ConfigSource, span: str, by: str, at: float) -> None:
    """Record that ``by`` asked for a backup of the range ``span`` at ``at``."""
    kept = source.recorded(KIND, "requested") or {}
    source.record(KIND, "requested", {**kept, span: {"by": by, "at": at}})


@dataclass(frozen=True)
class Backups:
    taken: dict[str, dict[str, Any]]  # range -> backup, ended, size
    archived: dict[str, float]  # master -> when its archive last caught up
    verified: dict[str, dict[str, Any]]  # range -> ok, at, backup, said, seconds
    requested: dict[str, dict[str, Any]]  # range -> by, at

    def due(self, span: str, every: float, now: float) -> str | None:
        """Why the range ``span`` is due a backup (None when it is not): none recorded,
        the newest older than ``every`` seconds, or one asked for since it was taken."""
        newest = self.taken.get(span)
        asked = self.requested.get(span)
        if newest is None:
            return "it has no backup"
        if asked is not None and float(asked["at"]) > float(newest["ended"]):
            return f"{asked['by']} asked for one"
        if now - float(newest["ended"]) > every:
            return f"its newest backup is {(now - float(newest['ended'])) / 3600:.1f} hours old"
        return None


def status(source: ConfigSource) -> Backups:
    def read(key: str) -> dict[str, Any]:
        return dict(source.recorded(KIND, key) or {})

    archived = {k: float(v) for k, v in read("archived").items()}
    return Backups(read("taken"), archived, read("verified"), read("requested"))
