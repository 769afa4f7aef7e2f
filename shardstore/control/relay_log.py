"""A replica's relay log across a restart: what MariaDB does to it, and how it is kept.

A semi-synchronous replica acknowledges a transaction once it is in its relay log, before
it has applied it, so the relay log of a replica that lags holds acknowledged writes no
other server may have. MariaDB, with GTID replication (``MASTER_USE_GTID``), deletes every
relay log whenever a replication thread is started while both are stopped
(``start_slave_threads``: "relay logs are not very useful when using GTID"), and fetches
again from its source from what it has applied. With a live source that loses nothing; with
a dead one, what the replica had received and not applied is gone, and its ``Gtid_IO_Pos``
falls back to what it applied, as if it had never received more. That happens:

- at the server's start, when both threads start with it (MariaDB's default): so replicas
  run with ``skip_slave_start``, and their threads stay stopped after a restart;
- at ``START SLAVE``, and at ``START SLAVE SQL_THREAD`` alone too, on a replica whose two
  threads are stopped (one restarted with ``skip_slave_start``, or stopped by hand);
- at ``CHANGE MASTER``, unless it names a relay log position.

So a kept relay log is applied with GTID off: ``CHANGE MASTER TO MASTER_USE_GTID=no,
RELAY_LOG_FILE=.., RELAY_LOG_POS=..`` (which keeps the files) at the first transaction it
has not applied, found by its GTID (the SQL thread's recorded position may lag after a
crash, and a transaction applied twice would stop it: strict mode), the SQL thread
started alone until it has read all of it, then GTID replication
put back as it was (its relay log, applied, is deleted then) and the SQL thread started
again, alone: ``apply_kept``. ``start`` then starts the I/O thread, from what the replica
now has: the restart path of a replica whose source is alive (``toolkit/cluster``, the
runbook in docs/operations.md). An emergency failover applies a kept relay log before it
judges what a replica has (``emergency.py``).
"""

from __future__ import annotations

import contextlib
import itertools
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from .config_source import ConfigError, ConfigSource
from .mysql_hosts import HostError, MySQLHost, gtid_domains

#: The config source's records of the replicas whose kept relay log was applied after a
#: restart (``applied_since_start``), by name.
RESTARTS = "restarted"

#: The SQL thread's state once it has applied all its relay log holds.
_READ_ALL = "Slave has read all relay log"
_GTID = re.compile(r"\b(\d+)-(\d+)-(\d+)\b")


@dataclass(frozen=True)
class Kept:
    """What ``apply_kept`` found and did on one replica."""

    #: Its threads had not run since its server started (``skip_slave_start``): nothing
    #: shows whether it was still replicating when its source failed.
    restarted: bool
    started_at: int  # when its server started (Unix time)
    before: str  # what it had applied (``gtid_slave_pos``) before
    after: str  # and after: all its relay log held

    @property
    def started(self) -> str:
        return datetime.fromtimestamp(self.started_at, UTC).isoformat(timespec="seconds")

    def note(self, name: str) -> str:
        since = f"restarted at {self.started}" if self.restarted else "stopped"
        applied = (
            f"applied its kept relay log, {self.before or 'nothing'} -> {self.after}"
            if self.after != self.before
            else f"its relay log held nothing past {self.before or 'nothing'}"
        )
        return f"{name} ({since}, its replication threads both stopped) {applied}"


def apply_kept(replica: MySQLHost, timeout: float) -> Kept | None:
    """On a replica whose two replication threads are stopped (with no SQL error): apply
    what its relay log holds, put GTID replication back as it was, and leave its SQL thread
    running and its I/O thread stopped, so that ``Gtid_IO_Pos`` shows what it has. None if
    it replicates from no one, or a thread runs (nothing of its relay log is at risk).
    HostError if the SQL thread stops on an error or has not read it all within
    ``timeout`` seconds: it is left stopped, GTID off, its relay log kept."""
    row = _status(replica)
    if row is None or row["Slave_IO_Running"] != "No" or row["Slave_SQL_Running"] != "No":
        return None
    if int(row.get("Last_SQL_Errno") or 0):
        return None  # it stopped on an error: applying again would stop there again
    started_at = _started_at(replica)
    restarted = not row.get("Gtid_IO_Pos")  # its I/O thread has not run since the start
    before = _applied(replica)
    mode = {"current_pos": "current_pos", "slave_pos": "slave_pos"}.get(
        str(row["Using_Gtid"]).lower(), "current_pos"
    )
    start = _first_unapplied(replica, str(row["Relay_Log_File"]), int(row["Relay_Log_Pos"]))
    if start is not None:
        replica.query(
            "CHANGE MASTER TO MASTER_USE_GTID=no, RELAY_LOG_FILE=%s, RELAY_LOG_POS=%s", start
        )
        replica.query("START SLAVE SQL_THREAD")
        _wait_read_all(replica, timeout)
        replica.query("STOP SLAVE SQL_THREAD")
        replica.query(f"CHANGE MASTER TO MASTER_USE_GTID={mode}")  # deletes the applied log
    replica.query("START SLAVE SQL_THREAD")  # nothing left in the relay log to lose
    return Kept(restarted, started_at, before, _applied(replica))


def applied_since_start(
    source: ConfigSource, name: str, replica: MySQLHost, timeout: float
) -> Kept | None:
    """``apply_kept`` on ``replica`` (named ``name``), remembered in ``source`` while its
    server runs: what was applied after its last restart, now or by an earlier call (an
    emergency failover planned again, with ``--accept-data-loss``), else None. Whether its
    I/O thread has run since is for the caller to see."""
    started_at = _started_at(replica)
    kept = apply_kept(replica, timeout)
    if kept is not None and kept.restarted:
        with contextlib.suppress(ConfigError):  # then only this call names the restart
            source.record(RESTARTS, name, asdict(kept))
        return kept
    try:
        found = source.recorded(RESTARTS, name)
    except ConfigError:
        return None
    if found is None or abs(int(found["started_at"]) - started_at) > 2:
        return None  # none, or of an earlier life of its server
    return Kept(True, int(found["started_at"]), str(found["before"]), str(found["after"]))


def start(replica: MySQLHost, timeout: float) -> Kept | None:
    """A restarted replica's replication started again, its kept relay log applied first
    (``apply_kept``), then its I/O thread; for a replica whose source is alive (if it is
    not, the I/O thread retries it, and an emergency failover would take the replica for
    one that was replicating until its source failed). None if both threads ran already,
    or it replicates from no one."""
    kept = apply_kept(replica, timeout)
    row = _status(replica)
    if row is not None and row["Slave_IO_Running"] == "No":
        replica.query("START SLAVE")  # the I/O thread, and the SQL thread if it had stopped
    return kept


def _status(replica: MySQLHost) -> dict[str, Any] | None:
    rows = replica.query("SHOW SLAVE STATUS")
    return rows[0] if rows else None


#: Events read from the relay log at a time.
PAGE = 1000


def _first_unapplied(replica: MySQLHost, file: str, pos: int) -> tuple[str, int] | None:
    """Where in the relay log the first transaction the replica has not applied begins
    (None: it applied all). Read from the SQL thread's position (``relay-log.info``, which
    may lag what it applied after a crash: MariaDB does not write it at every commit, so a
    transaction there may be applied already), or from the first relay log if that file
    is gone, onwards, file by file, transaction by transaction (its GTID event)."""
    applied = gtid_domains(_applied(replica))
    try:
        events = _events(replica, file, pos)
        first = next(events, None)
    except HostError:  # the file is gone (purged once applied): the first one kept
        first_event = replica.query("SHOW RELAYLOG EVENTS LIMIT 1")
        if not first_event:
            return None
        file, pos = str(first_event[0]["Log_name"]), 4
        events = _events(replica, file, pos)
        first = next(events, None)
    for event in itertools.chain([first] if first else [], events):
        if event["Event_type"] != "Gtid":
            continue
        gtid = _GTID.search(str(event["Info"]))  # "BEGIN GTID 0-1-6 cid=7", "GTID 0-1-1"
        if gtid is None:
            continue
        domain, sequence = int(gtid[1]), int(gtid[3])
        if sequence > applied.get(domain, (0, 0))[1]:
            return str(event["Log_name"]), int(event["Pos"])
    return None


def _events(replica: MySQLHost, file: str, pos: int) -> Iterator[dict[str, Any]]:
    """The relay log's events from ``file`` at ``pos`` to the end of the last file, read a
    thousand at a time; HostError if ``file`` is not there."""
    stem, _, number = file.rpartition(".")
    while True:
        rows = replica.query(f"SHOW RELAYLOG EVENTS IN %s FROM {int(pos)} LIMIT {PAGE + 1}", (file,))  # fmt: skip
        yield from rows[:PAGE]
        if len(rows) > PAGE:
            # The next page from where its first event begins: an event's End_log_pos is
            # in its master's binary log, not in this relay log.
            pos = int(rows[PAGE]["Pos"])
            continue
        file = f"{stem}.{int(number) + 1:0{len(number)}d}"
        number, pos = file.rpartition(".")[2], 4
        try:
            replica.query("SHOW RELAYLOG EVENTS IN %s LIMIT 1", (file,))
        except HostError:
            return  # no later file


def _started_at(replica: MySQLHost) -> int:
    return int(
        replica.value(
            "SELECT UNIX_TIMESTAMP() - variable_value FROM information_schema.global_status"
            " WHERE variable_name = 'UPTIME'"
        )
    )


def _applied(replica: MySQLHost) -> str:
    return str(replica.value("SELECT @@global.gtid_slave_pos") or "")


def _wait_read_all(replica: MySQLHost, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    where = f"{replica.host}:{replica.port}"
    while True:
        row = _status(replica) or {}
        if str(row.get("Slave_SQL_Running_State") or "").startswith(_READ_ALL):
            return
        failed = row.get("Slave_SQL_Running") != "Yes"
        if failed or time.monotonic() > deadline:
            if not failed:
                replica.query("STOP SLAVE SQL_THREAD")
            raise HostError(
                f"{where} cannot apply its kept relay log"
                + (
                    f": {row.get('Last_SQL_Error') or 'its SQL thread stopped'}"
                    if failed
                    else f" within {timeout:g} s"
                )
                + "; it is left stopped, MASTER_USE_GTID=no, its relay log kept"
            )
        time.sleep(0.05)
