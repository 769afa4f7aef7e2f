"""``shardstore backup verify FIRST-LAST``: a backup is only as good as its last restore
(pinterest/mysql_utils' backup_tester). The range's newest backup restored into a scratch
server and its master's archive replayed onto it (``backups/scratch.PointInTime``), then
the scratch server follows the master from there (never acknowledging its commits) until
it has caught up, and is compared with it shard by shard at one GTID position (``diff``).
A corrupt part, a gap in the archive, a replay that fails or a copy that differs fails
the verification, loudly. Its outcome is recorded (``backup_records``), for the metrics,
the alert and the console."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from ..backups.scratch import PointInTime
from ..backups.store import BackupStore
from ..exceptions import InvalidTopology, ShardStoreError
from . import backup_records, documents
from .context import Control
from .diff import diff_hosts
from .restore import newest_backup

#: How long the restored copy is given to catch up with its master.
CATCH_UP_SECONDS = 300.0


@dataclass(frozen=True)
class Verification:
    span: str
    ok: bool
    at: float
    backup: str  # HOST/NAME
    said: str
    seconds: float


def verify(control: Control, store: BackupStore, span: list[int]) -> Verification:
    """Verify the newest backup of the range ``span``, record and return the outcome
    (InvalidTopology, unrecorded, for a range the map lacks or one with no backup)."""
    document = control.source.current(documents.SHARDS).document
    entry = next((r for r in document["ranges"] if r["range"] == span), None)
    if entry is None:
        raise InvalidTopology(f"the shard map has no range {span[0]}-{span[1]}")
    made = newest_backup(store, span, None)
    master = str(entry["master"])
    address = str(document["hosts"][master])
    began = time.monotonic()
    restored = PointInTime(store, made, master, to_time=None, to_gtid=None)
    try:
        server = restored.server()
        with control.mysql(address) as m, control.mysql(server.address) as copy:
            copy.query("SET GLOBAL gtid_slave_pos = %s", (restored.position,))
            copy.replicate_from(m, position="slave_pos", acknowledging=False)
            if not copy.wait_for(m.gtid_binlog_pos(), CATCH_UP_SECONDS):
                raise ShardStoreError(f"the restored copy did not catch up with {master} in {CATCH_UP_SECONDS:g}s")  # fmt: skip
        shards = range(span[0], span[1] + 1)
        report = diff_hosts(control.mysql, address, server.address, shards, names=(master, "the backup"))  # fmt: skip
        ok, said = report.clean, f"{restored.said()}; {report.text()}"
    except ShardStoreError as exc:
        ok, said = False, str(exc)
    finally:
        restored.drop()
    outcome = Verification(f"{span[0]}-{span[1]}", ok, time.time(), f"{made.host}/{made.name}", said, time.monotonic() - began)  # fmt: skip
    backup_records.verified(control.source, outcome.span, asdict(outcome))
    return outcome
