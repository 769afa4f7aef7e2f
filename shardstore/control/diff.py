"""Compare the shards two MySQL hosts hold: row counts and checksums per table, at one point
in time (after Vitess's VDiff).

Each table is summarised by ``COUNT(*)`` and ``BIT_XOR(CRC32(...))`` of its rows
(pt-table-checksum's digest: order-free, one pass, no temporary table), every
table of a shard in one round trip, inside a consistent-snapshot transaction.

When host B replicates from host A, the two are compared at the same GTID
position while A keeps taking writes: B's applier (SQL thread) is stopped; A
opens its snapshot and names its position (``binlog_snapshot_*``,
``BINLOG_GTID_POS``); B applies up to exactly that position, opens its own
snapshot, and resumes. B's I/O thread runs throughout, so A's semi-synchronous
commits are acknowledged as ever: A's writers never notice the diff. Any
difference is then real, not replication lag.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field

from ..exceptions import InvalidTopology
from ..topology import Topology, database_name
from . import documents
from .config_source import ConfigSource
from .mysql_hosts import HostError, MySQLHost, endpoint
from .plans import Plan, Step

Connect = Callable[[str], MySQLHost]
#: A table's digest: (rows, checksum); None when the table is missing.
Digest = tuple[int, int] | None


@dataclass
class DiffReport:
    a: str
    b: str
    shards: Sequence[int]
    position: str  # the GTID position both were read at ("" if not replicating)
    tables: int = 0
    rows: int = 0
    differences: list[tuple[str, Digest, Digest]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def clean(self) -> bool:
        return not self.differences

    def text(self) -> str:
        at = f" at GTID {self.position}" if self.position else ""
        span = f"{self.shards[0]}..{self.shards[-1]}" if self.shards else "none"
        head = (
            f"diff {self.a} {self.b}, shards {span}{at}: {self.tables} tables, {self.rows} rows"
            f" each, in {self.seconds:.1f}s: "
        )
        if self.clean:
            return head + "identical"
        lines = [head + f"{len(self.differences)} tables differ"]
        for table, left, right in self.differences[:50]:
            lines.append(f"  {table}: {self.a} {_show(left)}, {self.b} {_show(right)}")
        return "\n".join(lines)


def _show(digest: Digest) -> str:
    return "missing" if digest is None else f"{digest[0]} rows (checksum {digest[1]:08x})"


def diff_hosts(
    connect: Connect, a: str, b: str, shards: Iterable[int], *, names: tuple[str, str] = ("A", "B"),
    catch_up_seconds: float = 30.0,
) -> DiffReport:  # fmt: skip
    """Compare ``shards`` on the servers at addresses ``a`` and ``b``."""
    shards = list(shards)
    started = time.monotonic()
    with ExitStack() as stack:
        reader_a = stack.enter_context(connect(a))
        reader_b = stack.enter_context(connect(b))
        admin_b = stack.enter_context(connect(b))  # START SLAVE would end reader_b's snapshot
        status = admin_b.replica_status()
        follows = status is not None and status.source == "{}:{}".format(*endpoint(a))
        position = ""
        if follows:
            # Only B's applier stops, up to A's snapshot: its I/O thread goes on receiving
            # (and acknowledging) A's writes, so A's semi-synchronous commits never wait.
            # (MariaDB's UNTIL master_gtid_pos would need the I/O thread stopped too, so
            # the applier stops at A's binary-log coordinates instead: the same point.)
            admin_b.query("STOP SLAVE SQL_THREAD")
            try:
                reader_a.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                snapshot = reader_a.snapshot_position()
                if snapshot is not None:
                    position = snapshot.gtid
                    admin_b.query(
                        "START SLAVE SQL_THREAD UNTIL MASTER_LOG_FILE = %s, MASTER_LOG_POS = %s",
                        (snapshot.file, snapshot.offset),
                    )
                    if not admin_b.wait_for(position, catch_up_seconds):
                        status = admin_b.replica_status()
                        why = status.last_error if status and status.last_error else "too slow"
                        raise HostError(f"{names[1]} did not reach {position}: {why}")
                reader_b.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            finally:
                admin_b.query("STOP SLAVE SQL_THREAD")
                admin_b.query("START SLAVE SQL_THREAD")
        else:
            reader_a.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            reader_b.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        report = DiffReport(names[0], names[1], shards, position)
        left, right = digests(reader_a, shards), digests(reader_b, shards)
        for key in sorted(set(left) | set(right)):
            x, y = left.get(key), right.get(key)
            report.tables += 1
            report.rows += x[0] if x else 0
            if x != y:
                report.differences.append((key, x, y))
        reader_a.query("COMMIT")
        reader_b.query("COMMIT")
    report.seconds = time.monotonic() - started
    return report


def digests(host: MySQLHost, shards: Sequence[int]) -> dict[str, Digest]:
    """``{"db00042.pins": (rows, checksum)}`` of every table of ``shards`` on ``host``, read in
    the transaction open on it: one query per shard."""
    columns = _columns(host, shards)
    present = host.databases()
    found: dict[str, Digest] = {}
    for shard in shards:
        db = database_name(shard)
        if db not in present:
            found.update({f"{db}.{table}": None for table in columns})
            continue
        sql = " UNION ALL ".join(
            f"SELECT '{table}' AS t, COUNT(*) AS n,"
            f" COALESCE(BIT_XOR(CRC32(CONCAT_WS('#', {', '.join(cols)}))), 0) AS c"
            f" FROM {db}.{table}"
            for table, cols in columns.items()
        )
        for row in host.query(sql):
            found[f"{db}.{row['t']}"] = (int(row["n"]), int(row["c"]))
    return found


def _columns(host: MySQLHost, shards: Sequence[int]) -> dict[str, list[str]]:
    """The tables every shard holds and their columns (read off the first shard there)."""
    for shard in shards:
        rows = host.query(
            "SELECT table_name AS t, column_name AS c FROM information_schema.columns"
            " WHERE table_schema = %s ORDER BY table_name, ordinal_position",
            (database_name(shard),),
        )
        if rows:
            columns: dict[str, list[str]] = {}
            for row in rows:
                columns.setdefault(str(row["t"]), []).append(f"`{row['c']}`")
            return columns
    return {}


def plan_diff(
    source: ConfigSource,
    *,
    a: str,
    b: str,
    shards: tuple[int, int] | None = None,
    connect: Connect = MySQLHost,
) -> Plan:
    """A diff of two hosts as a one-step plan (so the console journals it): the step's note
    is the report, and it fails if the hosts differ. ``shards``: (first, last), by default
    every shard either host masters."""
    document = source.current(documents.SHARDS).document
    hosts = document["hosts"]
    for name in (a, b):
        if name not in hosts:
            raise InvalidTopology(f"no host {name} in the shard map")
    if shards is None:
        topology = Topology.from_json(document)
        chosen = sorted({*topology.shards_of(a), *topology.shards_of(b)})
    else:
        if not 0 <= shards[0] <= shards[1] < document["shard_count"]:
            raise InvalidTopology(f"shards {shards[0]}-{shards[1]} are not in the shard map")
        chosen = list(range(shards[0], shards[1] + 1))
    if not chosen:
        raise InvalidTopology(f"neither {a} nor {b} masters a shard: name the shards")

    def compare() -> str:
        report = diff_hosts(connect, hosts[a], hosts[b], chosen, names=(a, b))
        if not report.clean:
            raise HostError(report.text())
        return report.text()

    span = f"{chosen[0]}..{chosen[-1]}"
    return Plan(
        "diff",
        f"diff shards {span} on {a} and {b}",
        [Step(f"compare shards {span} on {a} and {b} (rows, checksums)", (), compare)],
        {"a": a, "b": b, "shards": [chosen[0], chosen[-1]]},
    )
