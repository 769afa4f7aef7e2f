"""The local cluster's MariaDB servers: their options, their users, replication, and which of
them may be written.

Every server runs with a binary log, GTIDs in strict mode, ``log_slave_updates`` (a replica
can be promoted and be followed in turn) and semi-synchronous replication (``AFTER_SYNC``:
a commit is acknowledged to the client once a replica has the transaction, so a master
killed with SIGKILL loses no acknowledged write), with no fallback to asynchronous
(``NO_FALLBACK_MS``: a master whose replica is gone stops acknowledging writes).
Every server can acknowledge; only a master with a replica waits for acknowledgements (a
replica that waited would hold back its own applier: MariaDB waits for replicated commits
too), so the cluster turns the wait on when it opens a master, and failover and split
turn it on and off. Commits are not flushed to disk one by one (``sync_binlog=0``, ``innodb_flush_log_at_trx_commit=2``): a process crash
loses nothing, and semi-sync covers the rest on one machine.

A replica's threads do not start with its server (``skip_slave_start``): with GTID
replication MariaDB deletes the relay log of a replica whose threads start while both are
stopped, and what it had received and acknowledged but not applied would be gone if its
master is down (``shardstore/control/relay_log.py``). ``resume`` starts them again once the
kept relay log is applied.

Every server *starts* read-only. That is the fence: a crashed master that comes back cannot
take a write meant for the host that replaced it. The cluster then makes writable only the
hosts the shard map in force names as masters.

Three accounts on every server, made on each with ``sql_log_bin=0`` (so no replica replays
them and every server, promoted or not, has them): ``root`` (the operators', with a
password), ``repl`` (replication only) and the site's ``pinboard``, which may read and
write the shard databases ``db%`` but holds neither SUPER nor READ ONLY ADMIN, so
``read_only`` stops its writes.
"""

from __future__ import annotations

from contextlib import closing
from typing import Any

from shardstore.control import relay_log
from shardstore.control.mysql_hosts import MySQLHost
from shardstore.durability import NO_FALLBACK_MS
from toolkit.processes import HOST

REPLICATION_USER = "repl"
APP_USER = "pinboard"
APP_GRANTS = "SELECT, INSERT, UPDATE, DELETE, CREATE, INDEX, ALTER, DROP"
#: Seconds between a replica's attempts to reach its source (MariaDB's default is 60: a
#: replica restarted before its source would stay cut off for a minute).
CONNECT_RETRY = 1
#: How long a restarted replica may take to apply its kept relay log.
APPLY_SECONDS = 120.0
_ACCESS_DENIED = 1045


def server_args(server_id: int, *, bulk_load: bool = False) -> list[str]:
    """mariadbd options of a cluster server (after toolkit/servers/mariadb.py's own, which they
    override).

    ``bulk_load``: a master's first life, in which it makes every shard's tables before its
    replica is copied from it: no binary log (nothing replays it) and no fsync at all
    (``--debug-no-sync``: the DDL log alone syncs several times per CREATE TABLE). The
    cluster syncs the whole file system once the load is done.
    """
    if bulk_load:
        return [
            f"--server-id={server_id}",
            "--read-only=ON",
            "--innodb-buffer-pool-size=64M",
            "--skip-log-bin",
            "--debug-no-sync",
        ]
    return [
        f"--server-id={server_id}",
        "--log-bin=mysql-bin",
        "--relay-log=relay-bin",
        "--binlog-format=ROW",
        "--log-slave-updates=ON",
        "--gtid-strict-mode=ON",
        "--sync-binlog=0",
        "--innodb-flush-log-at-trx-commit=2",
        "--innodb-buffer-pool-size=64M",
        "--read-only=ON",
        "--rpl-semi-sync-master-enabled=OFF",
        "--rpl-semi-sync-slave-enabled=ON",
        "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
        f"--rpl-semi-sync-master-timeout={NO_FALLBACK_MS}",
        # A replica notices a silent master within seconds, and reconnects every second.
        "--slave-net-timeout=10",
        # A restart keeps a replica's relay log: its threads are started by ``resume``.
        "--skip-slave-start=ON",
        # Every table definition of a host's shards stays parsed (2,048 shards of 30
        # tables each on a fresh cluster): a whole-host diff reads each of them.
        "--table-definition-cache=65536",
        "--table-open-cache=8192",
    ]


def connect(port: int, *, user: str = "root", password: str = "") -> Any:
    import MySQLdb
    import MySQLdb.cursors

    return MySQLdb.connect(
        host=HOST,
        port=port,
        user=user,
        password=password,
        connect_timeout=5,
        autocommit=True,
        cursorclass=MySQLdb.cursors.DictCursor,
    )


def admin(port: int, password: str) -> Any:
    """root's connection; a server whose users are not made yet still has no root password."""
    import MySQLdb

    try:
        return connect(port, password=password)
    except MySQLdb.OperationalError as error:
        if error.args[0] != _ACCESS_DENIED:
            raise
        return connect(port)


def query(connection: Any, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    cursor = connection.cursor()
    try:
        cursor.execute(sql, params or None)
        return list(cursor.fetchall() or [])
    finally:
        cursor.close()


def create_users(port: int, secrets: dict[str, str]) -> None:
    """The three accounts, on this server only (not written to its binary log)."""
    with closing(admin(port, secrets["root"])) as db:
        query(db, "SET SESSION sql_log_bin = 0")
        accounts = "SELECT user AS name, host AS at FROM mysql.user WHERE user IN ('root', '')"
        for row in query(db, accounts):
            account = (row["name"], row["at"])
            if account[0] == "root" and account[1] in ("localhost", HOST, "::1"):
                query(db, "ALTER USER %s@%s IDENTIFIED BY %s", (*account, secrets["root"]))
            else:  # anonymous, or root@<this machine's name>, which no one should use
                query(db, "DROP USER %s@%s", account)
        for user, secret in ((REPLICATION_USER, "replication"), (APP_USER, "pinboard")):
            query(db, "CREATE USER IF NOT EXISTS %s@%s", (user, HOST))
            query(db, "ALTER USER %s@%s IDENTIFIED BY %s", (user, HOST, secrets[secret]))
        query(db, "GRANT REPLICATION SLAVE ON *.* TO %s@%s", (REPLICATION_USER, HOST))
        query(db, f"GRANT {APP_GRANTS} ON `db%%`.* TO %s@%s", (APP_USER, HOST))


def follow(replica_port: int, master_port: int, secrets: dict[str, str]) -> None:
    """Make a fresh server replicate from ``master_port`` from the start of its GTID history
    (as ``repl``: the password a replica keeps in master.info opens nothing more)."""
    with closing(admin(replica_port, secrets["root"])) as db:
        query(db, "STOP SLAVE")
        query(
            db,
            "CHANGE MASTER TO MASTER_HOST=%s, MASTER_PORT=%s, MASTER_USER=%s,"
            " MASTER_PASSWORD=%s, MASTER_USE_GTID=current_pos, MASTER_CONNECT_RETRY=%s",
            (HOST, master_port, REPLICATION_USER, secrets["replication"], CONNECT_RETRY),
        )
        query(db, "START SLAVE")


def replica_status(port: int, password: str) -> dict[str, Any] | None:
    """``SHOW SLAVE STATUS`` of the server, or None if it follows no one."""
    with closing(admin(port, password)) as db:
        rows = query(db, "SHOW SLAVE STATUS")
    return rows[0] if rows else None


def replicating(status: dict[str, Any]) -> bool:
    """Whether both replication threads run (an I/O thread still connecting does not)."""
    return bool(status["Slave_IO_Running"] == "Yes" and status["Slave_SQL_Running"] == "Yes")


def resume(port: int, password: str) -> dict[str, Any] | None:
    """Start replication again on a replica where it does not run (restarted: its threads
    do not start with it), its kept relay log applied first, retrying its source every
    ``CONNECT_RETRY`` seconds (an operation may have left MariaDB's minute); the status it
    had, if this did anything. For a replica whose master runs."""
    with closing(admin(port, password)) as db:
        rows = query(db, "SHOW SLAVE STATUS")
        if not rows or (replicating(rows[0]) and int(rows[0]["Connect_Retry"]) == CONNECT_RETRY):
            return None
        with MySQLHost(f"mysql://{HOST}:{port}", user="root", password=password) as replica:
            relay_log.apply_kept(replica, APPLY_SECONDS)  # if both threads are stopped
        query(db, "STOP SLAVE")
        query(db, "CHANGE MASTER TO MASTER_CONNECT_RETRY = %s", (CONNECT_RETRY,))
        query(db, "START SLAVE")
        return rows[0]


def set_writable(port: int, password: str, *, semi_sync: bool, domain: int | None = None) -> bool:
    """Clear ``read_only``, and wait for a replica's acknowledgements if ``semi_sync`` (the
    master has a replica; without one, semi-sync is armed as ``shardstore reopen`` arms
    it: commits wait for the first replica that connects, a split's reverse stream
    included); whether it was read-only. ``domain``: the GTID domain the shard map records
    for the host (a split's new master's), set first: a restart loses it."""
    with closing(admin(port, password)) as db:
        if domain is not None:
            query(db, f"SET GLOBAL gtid_domain_id = {int(domain)}")
        if not semi_sync:
            query(db, "SET GLOBAL rpl_semi_sync_master_wait_no_slave = OFF")
        query(db, "SET GLOBAL rpl_semi_sync_master_enabled = 1")
        was = bool(query(db, "SELECT @@global.read_only AS ro")[0]["ro"])
        if was:
            query(db, "SET GLOBAL read_only = 0")
        return was


def wait_caught_up(master_port: int, replica_port: int, password: str, timeout: float) -> None:
    """Wait until the replica has applied everything the master has written so far."""
    with closing(admin(master_port, password)) as master:
        position = query(master, "SELECT @@global.gtid_binlog_pos AS pos")[0]["pos"]
    if not position:
        return
    with closing(admin(replica_port, password)) as replica:
        waited = query(replica, "SELECT MASTER_GTID_WAIT(%s, %s) AS waited", (position, timeout))[
            0
        ]["waited"]
    if waited != 0:
        raise RuntimeError(
            f"the replica on port {replica_port} has not applied {position} within {timeout:.0f}s"
        )
