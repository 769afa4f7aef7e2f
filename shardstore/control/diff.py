"""Compare the shards two MySQL hosts hold: row counts and checksums per table, at one point
in time (after Vitess's VDiff).

Each table is summarised by ``COUNT(*)`` and the XOR of a 64-bit hash of each row (MD5
of its columns, each quoted: NULL-aware and unambiguous; order-free, one pass, no
temporary table), each table hashed with the columns it has on that host, every table of
a shard in one round trip. Shards are compared in chunks, each inside a consistent
snapshot held only while that chunk is read, both hosts read at once.

When host B replicates from host A, each chunk is compared at one GTID position while A
keeps taking writes: B's applier (SQL thread) is stopped; A opens its snapshot and names
its position (``binlog_snapshot_*``, ``BINLOG_GTID_POS``); B applies up to exactly that
position, opens its own snapshot, and resumes. B's I/O thread runs throughout, so A's
semi-synchronous commits are acknowledged as ever: A's writers never notice the diff. Any
difference is then real, not replication lag. Before each chunk, a B that fell behind is
waited for: the diff never puts a replica further behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field

from ..exceptions import InvalidTopology
from ..topology import Topology, database_name
from . import documents
from .config_source import ConfigSource
from .mysql_hosts import HostError, MySQLHost, endpoint
from .plans import Plan, Step

Connect = Callable[[str], MySQLHost]
#: A table's digest: (rows, 64-bit hash of its rows); None when the table is missing.
Digest = tuple[int, int] | None
#: Shards compared at one point in time: each chunk holds its snapshots briefly.
CHUNK_SHARDS = 64
#: A replica behind its master by more than this waits before the next chunk...
MAX_LAG_SECONDS = 5.0
#: ...at most this long, then the diff stops.
LAG_WAIT_SECONDS = 120.0


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
    return "missing" if digest is None else f"{digest[0]} rows (hash {digest[1]:016x})"


def diff_hosts(
    connect: Connect, a: str, b: str, shards: Iterable[int], *, names: tuple[str, str] = ("A", "B"),
    catch_up_seconds: float = 30.0, chunk: int = CHUNK_SHARDS, max_lag: float = MAX_LAG_SECONDS,
) -> DiffReport:  # fmt: skip
    """Compare ``shards`` on the servers at addresses ``a`` and ``b``, ``chunk`` shards at a
    time: each chunk at one point in time on both, read on both hosts at once."""
    shards = list(shards)
    started = time.monotonic()
    report = DiffReport(names[0], names[1], shards, "")
    with ExitStack() as stack, ThreadPoolExecutor(2) as pool:
        reader_a = stack.enter_context(connect(a))
        reader_b = stack.enter_context(connect(b))
        admin_b = stack.enter_context(connect(b))  # START SLAVE would end reader_b's snapshot
        status = admin_b.replica_status()
        follows = status is not None and status.source == "{}:{}".format(*endpoint(a))
        for first in range(0, len(shards), chunk):
            part = shards[first : first + chunk]
            if follows:
                _wait_lag(admin_b, max_lag, names[1])
                report.position = _snapshots(reader_a, reader_b, admin_b, names[1], catch_up_seconds)  # fmt: skip
            else:
                reader_a.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                reader_b.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            left, right = pool.map(digests, (reader_a, reader_b), (part, part))
            reader_a.query("COMMIT")
            reader_b.query("COMMIT")
            for key in sorted(set(left) | set(right)):
                x, y = left.get(key), right.get(key)
                if x is None and y is None:
                    continue  # a table other shards of the chunk have, and this one nowhere
                report.tables += 1
                report.rows += x[0] if x else 0
                if x != y:
                    report.differences.append((key, x, y))
    report.seconds = time.monotonic() - started
    return report


def _snapshots(
    reader_a: MySQLHost, reader_b: MySQLHost, admin_b: MySQLHost, name_b: str, seconds: float
) -> str:
    """Open a snapshot on A and one on B (which replicates from A) at the same GTID
    position; that position.

    Only B's applier stops, up to A's snapshot: its I/O thread goes on receiving (and
    acknowledging) A's writes, so A's semi-synchronous commits never wait. (MariaDB's
    UNTIL master_gtid_pos would need the I/O thread stopped too, so the applier stops at
    A's binary-log coordinates instead: the same point.)"""
    position = ""
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
            if not admin_b.wait_for(position, seconds):
                status = admin_b.replica_status()
                why = status.last_error if status and status.last_error else "too slow"
                raise HostError(f"{name_b} did not reach {position}: {why}")
        reader_b.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    finally:
        admin_b.query("STOP SLAVE SQL_THREAD")
        admin_b.query("START SLAVE SQL_THREAD")
    return position


def _wait_lag(admin_b: MySQLHost, max_lag: float, name_b: str) -> None:
    """Before a chunk, let B catch up to within ``max_lag`` s of A (a diff must not put a
    replica behind: it is read for failovers), waiting at most LAG_WAIT_SECONDS."""
    deadline = time.monotonic() + LAG_WAIT_SECONDS
    while True:
        status = admin_b.replica_status()
        lag = status.lag_seconds if status is not None else None
        if lag is None or lag <= max_lag:
            return
        if time.monotonic() > deadline:
            raise HostError(f"{name_b} stays {lag} s behind: the diff waits for no more")
        time.sleep(0.2)


def digests(host: MySQLHost, shards: Sequence[int]) -> dict[str, Digest]:
    """``{"db00042.items": (rows, hash)}`` of every table of ``shards`` on ``host``, read in
    the transaction open on it: one query per shard, each table hashed with its own
    columns there (a column one host lacks is a difference, not a skipped one)."""
    columns = _columns(host, shards)
    expected = {table for tables in columns.values() for table in tables}
    found: dict[str, Digest] = {}
    for shard in shards:
        db = database_name(shard)
        tables = columns.get(db, {})
        found.update({f"{db}.{table}": None for table in expected - set(tables)})
        if not tables:
            continue
        sql = " UNION ALL ".join(
            f"SELECT '{table}' AS t, COUNT(*) AS n, COALESCE(BIT_XOR({_row_hash(cols)}), 0) AS h"
            f" FROM {db}.{table}"
            for table, cols in tables.items()
        )
        for row in host.query(sql):
            found[f"{db}.{row['t']}"] = (int(row["n"]), int(row["h"]))
    return found


def _row_hash(columns: Sequence[str]) -> str:
    """A row's 64-bit hash: MD5 of its columns, each QUOTE()d (a string quoted and escaped,
    NULL as the bare word NULL), so no two different rows give one input, whatever their
    values hold ("a,b" in one column is not "a" and "b" in two; NULL is not 'NULL' or '')."""
    quoted = ", ".join(f"QUOTE({column})" for column in columns)
    return f"CAST(CONV(LEFT(MD5(CONCAT_WS(',', {quoted})), 16), 16, 10) AS UNSIGNED)"


def _columns(host: MySQLHost, shards: Sequence[int]) -> dict[str, dict[str, list[str]]]:
    """Each shard's tables there and their columns, in order: one query for them all."""
    names = [database_name(shard) for shard in shards]
    if not names:
        return {}
    rows = host.query(
        "SELECT table_schema AS d, table_name AS t, column_name AS c FROM information_schema.columns"
        f" WHERE table_schema IN ({', '.join(['%s'] * len(names))})"
        " ORDER BY table_schema, table_name, ordinal_position",
        tuple(names),
    )
    columns: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        columns.setdefault(str(row["d"]), {}).setdefault(str(row["t"]), []).append(f"`{row['c']}`")
    return columns


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
    current = source.current(documents.SHARDS)
    document = current.document
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

    def applying_again() -> str:
        """A run killed inside a chunk left B's applier stopped: start it (``abort``)."""
        with connect(hosts[b]) as replica:
            status = replica.replica_status()
            if status is None or status.sql_running or status.last_error:
                return f"{b}'s applier left as it is"
            replica.query("START SLAVE SQL_THREAD")
        return f"{b} applies its master's writes again"

    span = f"{chosen[0]}..{chosen[-1]}"
    # No locks: a diff reads, and a failover must never wait for one.
    return Plan(
        "diff",
        f"diff shards {span} on {a} and {b}",
        [
            Step(
                f"compare shards {span} on {a} and {b} (rows, checksums)",
                (),
                compare,
                applying_again,
            )
        ],
        {
            "a": a,
            "b": b,
            "shards": [chosen[0], chosen[-1]],
            "base": current.version,
            "rerunnable": True,
        },
    )
