"""The backups page: for each range of the shard map, its newest backup (its age, its size),
its master's binary-log archive (how long since it last held everything the master had
logged), its last verification and a backup asked for and not yet taken, as the backups' records in the config source say
(``shardstore/control/backup_records.py``). The same figures the metrics and the alerts
read, with the alerts' bounds: what would page or ask for a ticket is marked."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from shardstore.control import backup_records
from shardstore.control.config_source import ConfigSource
from shardstore.topology import Topology

#: The alerts' bounds (infra/monitoring/rules/pinboard.yml): BackupTooOld, BinlogArchiveLagging.
BACKUP_TOO_OLD = 30 * 3600
ARCHIVE_LAGGING = 60


@dataclass(frozen=True)
class BackupRow:
    span: str
    master: str
    backup: str  # HOST/NAME, or "" when the range has none
    age: float | None
    size: int
    archive_lag: float | None  # None: the archive has never held all of it
    verified: dict[str, Any]  # ok, at, backup, said ({} if never)
    pending: dict[str, Any]  # a backup asked for since the newest: by, at ({} if none)

    @property
    def first(self) -> str:
        return self.span.partition("-")[0]

    @property
    def last(self) -> str:
        return self.span.partition("-")[2]

    @property
    def backup_old(self) -> bool:
        return self.age is None or self.age > BACKUP_TOO_OLD

    @property
    def archive_behind(self) -> bool:
        return self.archive_lag is None or self.archive_lag > ARCHIVE_LAGGING

    @property
    def verification_failed(self) -> bool:
        return bool(self.verified) and not self.verified.get("ok")


def backup_rows(source: ConfigSource, topology: Topology) -> list[BackupRow]:
    kept, now = backup_records.status(source), time.time()
    rows = []
    for shards in topology.ranges:
        span = f"{shards.first}-{shards.last}"
        taken = kept.taken.get(span, {})
        caught_up = kept.archived.get(shards.master)
        age = now - float(taken["ended"]) if taken else None
        lag = now - caught_up if caught_up is not None else None
        verified = dict(kept.verified.get(span, {}))
        asked = dict(kept.requested.get(span, {}))
        pending = asked if asked and float(asked["at"]) > float(taken.get("ended", 0)) else {}
        row = BackupRow(span, shards.master, str(taken.get("backup", "")), age, int(taken.get("size", 0)), lag, verified, pending)  # fmt: skip
        rows.append(row)
    return rows
