"""A split's reverse stream (after Vitess's ReverseTraffic): the host that gave shards up
keeps replicating them back from their new master, so ``split --revert`` is a cut-back
of a few seconds, never a copy.

It is a MariaDB named replication connection on the old host (``revert_split9``: multi-
source, beside any other):

* it starts at the end of the new master's binary log, by file and offset, when the new
  master has written nothing since it stopped replicating: it carries the new master's
  own writes only, never the old host's history back (a GTID start position would have
  the old host, which goes on writing the shards it keeps, ahead of the new master in
  that domain, which strict mode refuses);
* the new master writes in a GTID domain of its own, the split's number (``split9``
  writes in domain 9: a map version is never used twice, so no server has a GTID in it
  yet), set when it becomes writable and recorded in the shard map the split publishes
  (``domains``). So the old host logs both streams in order, strict mode on, and the
  revert waits for the new master's position in that domain (``MASTER_GTID_WAIT``): a
  write in the old host's domain breaks the stream, loudly, rather than be skipped;
* it is filtered by table (``replicate_wild_do_table``, the moved databases as a few
  ``db0204_.%`` patterns): only the moved shards are written, whatever else the new
  master logs.

MariaDB has no ``SET PERSIST``: a restarted new master comes back read-only (as every
shard host starts) and in its server's default domain. ``shardstore reopen HOST``
(reopen.py) sets the domain the map records before it clears ``read_only``, so nothing
is written in the old host's domain.

The stream never acknowledges the new master's commits: the old host is no replica the
map names, and an acknowledgement releases a commit (semi-sync), so the old host runs with
``rpl_semi_sync_slave_enabled`` off (a server-wide setting, read as an I/O thread starts;
``replicate_from`` sets it again on a host made a replica). The new master's commits wait
for its own replicas. ``pairs`` and the fleet metrics report the stream (``stream``).

MariaDB keeps a named connection's filters in memory only: after a restart of the old
host the stream runs unfiltered, so ``check`` refuses it and the revert with it.
"""

from __future__ import annotations

import re
import time
from typing import Any

from ..topology import database_name
from .mysql_hosts import REPLICATE_SECONDS, HostError, MySQLHost, ReplicaStatus, gtid_domains

#: A split's connection on the old host: ``revert_split9`` for the map version it published.
NAME = "revert_split{split}"
WIDTH = len(database_name(0)) - 2  # the digits of a shard's database name


def connection(split: int) -> str:
    return NAME.format(split=split)


def patterns(shards: list[int]) -> str:
    """``replicate_wild_do_table`` for these shards' databases: each run of shard numbers
    cut into decimal prefixes (``db02048``, ``db02049``, ``db0205_``... ``db03___``), so a
    host's half (2,048 shards) takes a dozen patterns, not 2,048 names."""
    out: list[str] = []
    runs: list[list[int]] = []
    for shard in sorted(shards):
        if runs and runs[-1][1] == shard - 1:
            runs[-1][1] = shard
        else:
            runs.append([shard, shard])
    for first, last in runs:
        n = first
        while n <= last:
            size = 1
            while n % (size * 10) == 0 and n + size * 10 - 1 <= last and size < 10**WIDTH:
                size *= 10
            digits = len(str(size)) - 1
            out.append(f"db{str(n).zfill(WIDTH)[: WIDTH - digits]}{'_' * digits}.%")
            n += size
    return ",".join(out)


def writing_domain(old: MySQLHost, new: MySQLHost, domain: int) -> int:
    """Make ``new`` write in GTID ``domain`` (the split's), for the sessions it opens from
    now on; refused if ``old`` writes in it or has a GTID in it already."""
    theirs = int(old.value("SELECT @@global.gtid_domain_id"))
    if domain == theirs or domain in gtid_domains(old.gtid_binlog_pos()):
        raise HostError(f"{old.host}:{old.port} has written in GTID domain {domain} already")
    new.query(f"SET GLOBAL gtid_domain_id = {int(domain)}")
    return domain


def start(old: MySQLHost, new: MySQLHost, split: int, shards: list[int]) -> str:
    """Point ``old``'s connection for ``split`` at the end of ``new``'s binary log, for
    ``shards`` only; returns once it runs. The caller knows ``old`` has all of ``new``'s
    writes there (``new`` took none yet, or ``old`` caught up and ``new`` is fenced)."""
    name = connection(split)
    if not old.replication:
        raise HostError("no replication account: set PINBOARD_MYSQL_REPLICATION (user:password)")
    user, _, password = old.replication.partition(":")
    end = new.query("SHOW MASTER STATUS")
    if not end:
        raise HostError(f"{new.host}:{new.port} has no binary log")
    stop(old, split)
    # Not a replica of ``new``: its acknowledgement would release ``new``'s commits alone.
    old.query("SET GLOBAL rpl_semi_sync_slave_enabled = 0")
    old.query(
        f"CHANGE MASTER '{name}' TO MASTER_HOST=%s, MASTER_PORT=%s, MASTER_USER=%s,"
        " MASTER_PASSWORD=%s, MASTER_USE_GTID=no, MASTER_LOG_FILE=%s, MASTER_LOG_POS=%s,"
        " MASTER_CONNECT_RETRY=1",
        (new.host, new.port, user, password, end[0]["File"], end[0]["Position"]),
    )
    old.query(f"SET GLOBAL {name}.replicate_wild_do_table = %s", (patterns(shards),))
    old.query(f"START SLAVE '{name}'")
    _wait_running(old, split)
    at = f"{end[0]['File']}:{end[0]['Position']}"
    return f"{name} on {old.host}:{old.port} replicates {len(shards)} shards from {new.host}:{new.port} {at}"  # fmt: skip


def _wait_running(old: MySQLHost, split: int) -> None:
    deadline = time.monotonic() + REPLICATE_SECONDS
    while True:
        row = status(old, split) or {}
        if row.get("Slave_IO_Running") == "Yes" and row.get("Slave_SQL_Running") == "Yes":
            return
        if time.monotonic() > deadline:
            why = row.get("Last_IO_Error") or row.get("Last_SQL_Error") or "not running"
            raise HostError(f"{connection(split)} on {old.host}:{old.port}: {why}")
        time.sleep(0.05)


def stop(old: MySQLHost, split: int) -> bool:
    """Stop and forget ``old``'s connection for ``split``; whether there was one."""
    if status(old, split) is None:
        return False
    name = connection(split)
    old.query(f"STOP SLAVE '{name}'")
    old.query(f"RESET SLAVE '{name}' ALL")
    return True


def status(old: MySQLHost, split: int) -> dict[str, Any] | None:
    """``SHOW SLAVE 'revert_splitN' STATUS`` on the old host; None if it has no such one."""
    rows = old.query("SHOW ALL SLAVES STATUS")
    return next((r for r in rows if r.get("Connection_name") == connection(split)), None)


def streamed(host: MySQLHost) -> list[re.Pattern[str]]:
    """The databases every reverse stream on ``host`` writes, as regular expressions."""
    out = []
    for row in host.query("SHOW ALL SLAVES STATUS"):
        if str(row.get("Connection_name") or "").startswith(NAME.split("{")[0]):
            for pattern in str(row.get("Replicate_Wild_Do_Table") or "").split(","):
                db = pattern.partition(".")[0]
                if db:
                    out.append(re.compile(db.replace("_", ".").replace("%", ".*")))
    return out


def check(old: MySQLHost, new: MySQLHost, split: int, shards: list[int]) -> str:
    """Raise HostError unless ``old``'s stream for ``split`` runs, healthy, from ``new``,
    filtered to ``shards``: a revert must not guess. A note of its state."""
    name, row = connection(split), status(old, split)
    where = f"{old.host}:{old.port}"
    if row is None:
        raise HostError(f"{where} has no reverse stream {name} (cleaned up, or never started)")
    source = f"{row.get('Master_Host')}:{row.get('Master_Port')}"
    error = str(row.get("Last_SQL_Error") or row.get("Last_IO_Error") or "")
    problems = [
        f"it follows {source}, not {new.host}:{new.port}"
        if source != f"{new.host}:{new.port}"
        else "",
        f"I/O thread {row.get('Slave_IO_Running')}" if row.get("Slave_IO_Running") != "Yes" else "",
        f"SQL thread {row.get('Slave_SQL_Running')}"
        if row.get("Slave_SQL_Running") != "Yes"
        else "",
        f"error: {error}" if error else "",
        "its table filter is lost (a restart?)"
        if str(row.get("Replicate_Wild_Do_Table") or "") != patterns(shards)
        else "",
    ]
    if any(problems):
        raise HostError(f"reverse stream {name} on {where} is broken: " + "; ".join(p for p in problems if p))  # fmt: skip
    return f"{name} on {where} runs from {source}, {row.get('Seconds_Behind_Master')}s behind"


def caught_up(old: MySQLHost, new: MySQLHost, timeout: float) -> str:
    """Wait until ``old`` has applied all ``new`` wrote itself: in each GTID domain where
    ``new`` logged the last transaction (its own domain, even if a restart has reset
    ``gtid_domain_id`` since); that position."""
    server = new.server_id()
    own = [
        f"{domain}-{writer}-{sequence}"
        for domain, (writer, sequence) in gtid_domains(new.gtid_binlog_pos()).items()
        if writer == server
    ]
    position = ",".join(own)
    if not old.wait_for(position, timeout):
        raise HostError(f"{old.host}:{old.port} did not apply {position} in {timeout:g}s")
    return position


def stream(row: dict[str, Any]) -> ReplicaStatus:
    """One row of ``SHOW ALL SLAVES STATUS`` (any named connection) as a ``ReplicaStatus``."""
    lag = row.get("Seconds_Behind_Master")
    return ReplicaStatus(
        source=f"{row.get('Master_Host')}:{row.get('Master_Port')}",
        io_running=row.get("Slave_IO_Running") == "Yes",
        sql_running=row.get("Slave_SQL_Running") == "Yes",
        lag_seconds=None if lag is None else int(lag),
        last_error=str(row.get("Last_SQL_Error") or row.get("Last_IO_Error") or ""),
        io_state=str(row.get("Slave_IO_Running") or "No"),
        received=str(row.get("Gtid_IO_Pos") or ""),
        io_errno=int(row.get("Last_IO_Errno") or 0),
    )


def is_reverse(name: str) -> bool:
    """Whether a named connection is a split's reverse stream."""
    return re.fullmatch(NAME.replace("{split}", r"\d+"), name) is not None
