"""Retention: what ``backup prune`` removes from a directory store once it is older than the
window kept (eight days by default: any second of the last week restores, with a day's
margin). A bucket expires its own objects (its lifecycle rule, and Object Lock forbids
deleting them sooner: Terraform's modules/backups), so nothing on S3 is pruned here.

Kept whatever their age: each host's newest backup (a range is never left with none) and
every archived binary log that a kept backup may need, those that ended after the oldest
kept backup began. A backup never finished (parts, no manifest) goes once it is old."""

from __future__ import annotations

import calendar
import time
from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise

from .binlogs import PREFIX, archived
from .manifest import MANIFEST, Manifest, manifests
from .store import DirectoryStore

KEEP_DAYS = 8


@dataclass(frozen=True)
class Pruned:
    backups: list[str]  # HOST/NAME, finished or not
    logs: list[str]  # HOST/FILE@CREATED
    horizon: float  # binary logs that ended before this went


def prune(store: DirectoryStore, keep: float, now: float) -> Pruned:
    """Remove from ``store`` what is older than ``keep`` seconds at ``now``."""
    cutoff = now - keep
    by_host: dict[str, list[Manifest]] = defaultdict(list)
    for made in manifests(store):
        by_host[made.host].append(made)
    old = [m for theirs in by_host.values() for m in theirs[:-1] if m.ended < cutoff]
    kept = [m for theirs in by_host.values() for m in theirs if m not in old]
    horizon = min([cutoff, *(m.started for m in kept)])

    gone = {f"{m.host}/{m.name}" for m in old}
    finished = {f"{m.host}/{m.name}" for theirs in by_host.values() for m in theirs}
    keys: dict[str, list[str]] = defaultdict(list)
    for key in store.keys(""):
        host, _, rest = key.partition("/")
        name = rest.partition("/")[0]
        if host != PREFIX and rest:
            keys[f"{host}/{name}"].append(key)
    for backup, theirs in keys.items():
        began = _began(backup.partition("/")[2])
        if backup not in finished and began is not None and began < cutoff:
            gone.add(backup)  # parts of a backup never finished
        if backup in gone:
            # The manifest first: a backup half removed is one never finished.
            store.delete(sorted(theirs, key=lambda k: not k.endswith(f"/{MANIFEST}")))

    logs = []
    for host in sorted({key.split("/")[1] for key in store.keys(f"{PREFIX}/")}):
        found = archived(store, host)
        for log, after in pairwise(found):
            if log.closed is not None and after.created < horizon:
                name = f"{log.file}@{log.created}"
                store.delete(store.keys(f"{PREFIX}/{host}/{name}/"))
                logs.append(f"{host}/{name}")
    return Pruned(sorted(gone), logs, horizon)


def _began(name: str) -> float | None:
    """When the backup called ``name`` (``20261129T050312Z``) began; None if not a name."""
    try:
        return float(calendar.timegm(time.strptime(name, "%Y%m%dT%H%M%SZ")))
    except ValueError:
        return None
