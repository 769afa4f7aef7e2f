"""``shardstore restore-shard SHARD --to TIME --into HOST``: one shard as it was at a time,
beside the live one, compared with it (what an application bug deleted or changed, by
object ID), and with ``--copy-back`` the rows it deleted written back (``plan_restore_shard``):

1. the shard's range's newest backup before the time restored into a scratch server and
   its master's archived binary logs replayed onto it up to that second (as ``restore``);
2. the shard's database copied from there onto ``HOST``, a MySQL host of the map that
   serves no range (a spare): replacing any copy an earlier run left there, written
   unlogged, so nothing replicates it;
3. the copy compared with the live shard on its master, table by table, by primary key:
   rows *missing* (in the copy, not live: deleted since), *added* (live only: written
   since) and *changed*; an object's row is named by its ID;
4. with ``--copy-back``: each missing row inserted into the live shard on its master, as
   the copy has it (logged: the replicas get it too). Added and changed rows are left as
   they are: which of them were the bug is a person's call, and the comparison lists them;
5. the scratch server stopped.

The copy on ``HOST`` stays for the operator to read (``db01234`` there) until the next
run or a ``rebuild`` of that host. The backup and its archive are found and checked as the
plan is made, or, given how to open the store rather than the store (the console, whose
web hosts may not read the backups), as it runs, on the worker: step 1 then refuses, with
nothing changed, a time before the oldest backup or a gap in the archive.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..backups.binlogs import chain
from ..backups.scratch import PointInTime
from ..backups.store import BackupStore
from ..exceptions import InvalidTopology
from ..ids import compose
from ..replicas import replicas_of
from ..topology import database_name
from . import documents
from .config_source import ConfigSource
from .failover import Connect
from .mysql_hosts import MySQLHost
from .plans import Plan, Step
from .restore import newest_backup, utc
from .snapshot_copy import Throttle, copy_databases

#: Rows of each kind a comparison names in its report (all are counted).
SHOWN = 20

Row = dict[str, Any]


@dataclass
class TableDiff:
    """One table of the shard, the copy against the live one, by primary key."""

    table: str
    key: tuple[str, ...]
    missing: list[tuple[Any, ...]] = field(default_factory=list)  # deleted since
    added: list[tuple[Any, ...]] = field(default_factory=list)  # written since
    changed: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not (self.missing or self.added or self.changed)


def compare_shard(copy: MySQLHost, live: MySQLHost, database: str) -> list[TableDiff]:
    """Every table of ``database`` on ``copy`` against ``live``."""
    tables = sorted(_tables(copy, database) | _tables(live, database))
    diffs = []
    for table in tables:
        key = _primary_key(copy, database, table) or _primary_key(live, database, table)
        old, new = _rows(copy, database, table, key), _rows(live, database, table, key)
        diff = TableDiff(table, key)
        diff.missing = sorted(k for k in old if k not in new)
        diff.added = sorted(k for k in new if k not in old)
        diff.changed = sorted(k for k in old if k in new and old[k] != new[k])
        diffs.append(diff)
    return diffs


def copy_back(copy: MySQLHost, live: MySQLHost, database: str, diffs: list[TableDiff]) -> int:
    """Insert each row ``diffs`` finds missing from ``live``, as ``copy`` has it; how many."""
    done = 0
    for diff in diffs:
        if not diff.missing:
            continue
        rows = _rows(copy, database, diff.table, diff.key)
        for key in diff.missing:
            row = rows[key]
            columns = ", ".join(f"`{c}`" for c in row)
            live.query(f"INSERT INTO `{database}`.`{diff.table}` ({columns}) VALUES ({', '.join(['%s'] * len(row))})", tuple(row.values()))  # fmt: skip
            done += 1
    return done


def report(diffs: list[TableDiff], shard: int, types: Mapping[str, int]) -> str:
    """The comparison as the operator reads it: each table that differs, its rows named
    (an object's by its ID), at most ``SHOWN`` of each kind."""
    lines = []
    for diff in diffs:
        if diff.same:
            continue
        lines.append(f"{diff.table}: {len(diff.missing)} missing (deleted since), {len(diff.added)} added since, {len(diff.changed)} changed")  # fmt: skip
        for kind, keys in (("missing", diff.missing), ("added", diff.added), ("changed", diff.changed)):  # fmt: skip
            named = [_name(diff, key, shard, types) for key in keys[:SHOWN]]
            if named:
                lines.append(f"  {kind}: {', '.join(named)}{' ...' if len(keys) > SHOWN else ''}")
    return "\n".join(lines) or "the shard is as it was: no row missing, added or changed"


class _PointFound:
    """The point in time to restore: the range's newest backup by the time, its master's
    archive checked to continue it; found once, when first asked for."""

    def __init__(self, backups: BackupStore | Callable[[], BackupStore], span: list[int], master: str, to_time: float) -> None:  # fmt: skip
        self.backups, self.span, self.master, self.to_time = backups, span, master, to_time
        self.restored: PointInTime | None = None

    def get(self) -> PointInTime:
        if self.restored is None:
            store = self.backups() if callable(self.backups) else self.backups
            made = newest_backup(store, self.span, self.to_time)
            chain(store, self.master, made.gtid)
            self.restored = PointInTime(store, made, self.master, to_time=self.to_time, to_gtid=None)  # fmt: skip
        return self.restored

    def said(self) -> str:
        return self.get().said()

    def drop(self) -> str:
        return self.restored.drop() if self.restored is not None else "no scratch server was made"


def plan_restore_shard(
    source: ConfigSource,
    store: BackupStore | Callable[[], BackupStore],
    *,
    shard: int,
    to_time: float,
    into: str,
    author: str,
    copy_rows_back: bool = False,
    types: Mapping[str, int] | None = None,
    connect: Connect = MySQLHost,
) -> Plan:
    """The plan to restore ``shard`` as of ``to_time`` onto ``into`` and compare it with
    the live shard (and copy the deleted rows back), from ``store``, or the store opened as
    the plan runs. InvalidTopology when it cannot."""
    document = source.current(documents.SHARDS).document
    entry = next((r for r in document["ranges"] if r["range"][0] <= shard <= r["range"][1]), None)  # fmt: skip
    if entry is None:
        raise InvalidTopology(f"no range of the shard map holds shard {shard}")
    address = str(document["hosts"].get(into, ""))
    if not address.startswith("mysql://"):
        raise InvalidTopology(f"{into} is not a MySQL host of the shard map")
    for r in document["ranges"]:
        if into in (r["master"], *replicas_of(r)):
            raise InvalidTopology(f"{into} serves shards {r['range'][0]}-{r['range'][1]}: a shard is restored beside the live one, onto a host that serves no range")  # fmt: skip
    span, master = list(entry["range"]), str(entry["master"])
    database, when = database_name(shard), utc(to_time)
    point = _PointFound(store, span, master, to_time)
    if callable(store):
        replayed = f"restore range {span[0]}-{span[1]}'s newest backup by {when} (found as this runs) into a scratch server and replay {master}'s archived binary logs to {when}"  # fmt: skip
    else:
        made = point.get().made  # the backup and its archive checked now
        replayed = f"restore backup {made.host}/{made.name} into a scratch server and replay {master}'s archived binary logs to {when}"  # fmt: skip
    live = str(document["hosts"][master])
    found: dict[str, list[TableDiff]] = {}

    def copy() -> str:
        server = point.get().server()
        with server.connect() as s, connect(address) as h, server.connect() as busy:
            h.query("SET SESSION sql_log_bin = 0")
            h.query(f"DROP DATABASE IF EXISTS `{database}`")
            done = copy_databases(s, h, [database], throttle=Throttle(busy), parallel=1)
        return f"{database} as of {when} ({done.bytes / 1e6:.2f} MB) on {into}"

    def compare() -> str:
        with connect(address) as h, connect(live) as m:
            found["diffs"] = compare_shard(h, m, database)
        return report(found["diffs"], shard, types or {})

    def back() -> str:
        with connect(address) as h, connect(live) as m:
            diffs = compare_shard(h, m, database)  # again: rows may have come back since
            return f"{copy_back(h, m, database, diffs)} rows written back into {database} on {master}"  # fmt: skip

    steps = [
        Step(replayed, (into,), point.said, point.drop),
        Step(f"copy {database} as of {when} onto {into}", (into,), copy),
        Step(f"compare it with the live {database} on {master}", (into,), compare),
    ]
    if copy_rows_back:
        steps.append(Step(f"write the rows deleted since {when} back into {database} on {master}", (into, master), back))  # fmt: skip
    steps.append(Step("stop the scratch server", (into,), point.drop))
    params = {"shard": shard, "to_time": to_time, "into": into, "copy_back": copy_rows_back}
    summary = f"restore shard {shard} as of {when} onto {into}{', and write its deleted rows back' if copy_rows_back else ''}"  # fmt: skip
    return Plan("restore-shard", summary, steps, params)


def _tables(host: MySQLHost, database: str) -> set[str]:
    if database not in host.databases():
        return set()
    return {str(next(iter(r.values()))) for r in host.query(f"SHOW TABLES FROM `{database}`")}


def _primary_key(host: MySQLHost, database: str, table: str) -> tuple[str, ...]:
    if table not in _tables(host, database):
        return ()
    rows = host.query(f"SHOW KEYS FROM `{database}`.`{table}` WHERE Key_name = 'PRIMARY'")
    return tuple(str(r["Column_name"]) for r in sorted(rows, key=lambda r: int(r["Seq_in_index"])))  # fmt: skip


def _rows(host: MySQLHost, database: str, table: str, key: tuple[str, ...]) -> dict[tuple[Any, ...], Row]:  # fmt: skip
    """Every row of the table, by its primary key (a shard's table fits in memory)."""
    if table not in _tables(host, database):
        return {}
    rows = host.query(f"SELECT * FROM `{database}`.`{table}`")
    return {tuple(row[c] for c in key) if key else tuple(row.values()): dict(row) for row in rows}


def _name(diff: TableDiff, key: tuple[Any, ...], shard: int, types: Mapping[str, int]) -> str:
    if diff.key == ("local_id",) and diff.table in types:
        return str(compose(shard, types[diff.table], int(key[0])))
    return "(" + ", ".join(str(part) for part in key) + ")" if len(key) > 1 else str(key[0])
