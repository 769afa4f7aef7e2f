"""A fence made by MySQL itself for shards that change master while their old host stays
up (a split, its revert): the accounts that write the shard databases through a pattern
(the site's ``db%``) lose their writes on the moving databases on the old host, so a
process on a stale map (cut off from ZooKeeper, say) gets an error (``ShardReadOnly``),
never a write that lands where the shard no longer lives.

A grant of ``SELECT`` alone on a database comes before the pattern (MySQL takes the most
specific matching row), so the account keeps reading and writing every other shard. The
grants are rows of ``mysql.db`` written at once (what GRANT and REVOKE write, one reload
for all), not written to the binary log: the host taking the shards over keeps the
writes. MySQL reads a session's privileges on its default database at ``USE``, and a
transaction already open commits without a new check, so those sessions are ended.

A copy that nothing feeds any more (a split's new master's, once its revert has given the
shards back: ``take_reads``) loses the reads too, a grant of nothing: a process on a stale
map then gets an error (``ShardReadOnly``, a 503 to retry) where it would read a frozen
copy and serve it, or cache it. A copy that replication still feeds keeps its reads (a
split's old host, fed by the reverse stream until cleanup; a demoted master, fed by the
new one): a stale map reads it a replication delay behind.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from .mysql_hosts import MySQLHost
from .plans import Step

#: How long the transactions open when a fence takes the writes may go on to end by
#: themselves before their sessions are ended.
DRAIN_SECONDS = 1.0


def fence_step(
    connect: Callable[[str], MySQLHost],
    host: str,
    address: str,
    databases: list[str],
    shards: str,
    *,
    give_back: bool = False,
) -> Step:
    """The step that takes the site's writes on ``databases`` (shards ``shards``) away on
    ``host``, undone by giving them back; ``give_back``: the other way round."""

    def take() -> str:
        with connect(address) as server:
            return take_writes(server, databases)

    def give() -> str:
        with connect(address) as server:
            return give_writes_back(server, databases)

    if give_back:
        return Step(
            f"give the site's writes on shards {shards} back on {host}", (host,), give, take
        )
    return Step(
        f"take the site's writes on shards {shards} away on {host} (MySQL grants)",
        (host,),
        take,
        give,
    )


def read_fence_step(
    connect: Callable[[str], MySQLHost], host: str, address: str, databases: list[str], shards: str
) -> Step:
    """The step that takes the site's reads on ``databases`` (shards ``shards``) away on
    ``host`` as well as its writes (``take_reads``): for a copy that nothing feeds any more."""

    def take() -> str:
        with connect(address) as server:
            return take_reads(server, databases)

    return Step(
        f"take the site's reads on shards {shards} away on {host} too (MySQL grants)",
        (host,),
        take,
    )


def take_writes(host: MySQLHost, databases: list[str]) -> str:
    """Take the writes on ``databases`` away from every account that holds them through a
    pattern (the site's, ``db%``): a grant of SELECT alone on a database comes before
    the pattern, so MySQL itself refuses those accounts' writes there, whatever map a
    process follows. Then end their sessions that could still write there (one in a
    transaction, or one whose default database is fenced: its privileges were read at
    ``USE``). On this server only (not in its binary log: the host taking the shards
    over must keep the writes). A note of what was done."""
    return _take(host, databases, "writes", "Y")


def take_reads(host: MySQLHost, databases: list[str]) -> str:
    """``take_writes``, and the reads too: a grant of nothing on each database comes before
    the pattern, so MySQL refuses those accounts' SELECTs there (``SELECT command denied``,
    at once, in sessions already open too). For a copy nothing feeds any more: a process on
    a stale map gets an error, not a frozen value. ``give_writes_back`` gives both back."""
    return _take(host, databases, "reads and writes", "N")


def _take(host: MySQLHost, databases: list[str], what: str, select: str) -> str:
    accounts = _pattern_writers(host, databases)
    rows = [(at, db, user) for user, at in accounts for db in databases]
    _privileges(
        host,
        "INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES"
        f" {', '.join(['(%s, %s, %s, %s)'] * len(rows))}"
        " ON DUPLICATE KEY UPDATE Select_priv = VALUES(Select_priv)",
        tuple(value for row in rows for value in (*row, select)),
    )
    ended = _end_sessions(host, accounts, databases)
    who = ", ".join(f"{u}@{h}" for u, h in accounts) or "no account"
    return f"{what} on {len(databases)} databases taken from {who}; {ended} sessions ended"


def give_writes_back(host: MySQLHost, databases: list[str]) -> str:
    """Give back what ``take_writes`` (or ``take_reads``) took (idempotent)."""
    accounts = _pattern_writers(host, databases)
    wanted = set(databases)
    rows = host.query(
        "SELECT user, host AS at, db FROM mysql.db"
        " WHERE insert_priv = 'N' AND update_priv = 'N' AND delete_priv = 'N'"
    )
    fenced = [
        (str(r["user"]), str(r["at"]), str(r["db"]))
        for r in rows
        if r["db"] in wanted and (str(r["user"]), str(r["at"])) in accounts
    ]
    _privileges(
        host,
        "DELETE FROM mysql.db WHERE (User, Host, Db) IN"
        f" ({', '.join(['(%s, %s, %s)'] * len(fenced))})",
        tuple(value for row in fenced for value in row),
    )
    return f"writes on {len({db for _, _, db in fenced})} databases given back"


def _privileges(host: MySQLHost, sql: str, params: tuple[str, ...]) -> None:
    """Change ``mysql.db`` rows as GRANT and REVOKE would, in one statement and one reload
    for every database (a GRANT each takes seconds for a host's half of 4,096 shards), on
    this server only."""
    if not params:
        return
    host.query("SET SESSION sql_log_bin = 0")
    try:
        host.query(sql, params)
        host.query("FLUSH PRIVILEGES")
    finally:
        host.query("SET SESSION sql_log_bin = 1")


def fenced(host: MySQLHost, databases: list[str]) -> list[str]:
    """Those of ``databases`` whose writes ``take_writes`` (or ``take_reads``) took away on
    ``host``."""
    rows = host.query(
        "SELECT DISTINCT db FROM mysql.db"
        " WHERE insert_priv = 'N' AND update_priv = 'N' AND delete_priv = 'N'"
    )
    taken = {str(r["db"]) for r in rows}
    return [db for db in databases if db in taken]


def _pattern_writers(host: MySQLHost, databases: list[str]) -> list[tuple[str, str]]:
    """The accounts that may write some of ``databases`` through a database pattern."""
    rows = host.query(
        "SELECT user, host AS at, db FROM mysql.db"
        " WHERE insert_priv = 'Y' OR update_priv = 'Y' OR delete_priv = 'Y'"
    )
    writers = set()
    for row in rows:
        pattern = _like(str(row["db"]))
        if pattern is not None and any(pattern.fullmatch(db) for db in databases):
            writers.add((str(row["user"]), str(row["at"])))
    return sorted(writers)


def _end_sessions(host: MySQLHost, accounts: list[tuple[str, str]], databases: list[str]) -> int:
    """End the sessions that could still write the fenced databases: those whose default
    database is one of them, and the transactions open when the writes were taken. Those
    transactions get ``DRAIN_SECONDS`` to end by themselves first: a write in flight on a
    shard that stays takes milliseconds, and ending it would fail a request the fence is
    not about; a transaction still open after that is ended (a statement run after the
    fence is checked against it; one begun before would commit unchecked)."""
    users = {user for user, _ in accounts}
    if not users:
        return 0
    fenced = set(databases)

    def writers() -> list[dict[str, object]]:
        rows = host.query(
            "SELECT p.id, p.user, p.db, p.command, t.trx_id, t.trx_rows_modified"
            " FROM information_schema.processlist p"
            " LEFT JOIN information_schema.innodb_trx t ON t.trx_mysql_thread_id = p.id"
        )
        return [r for r in rows if r["user"] in users and (r["trx_id"] or r["db"] in fenced)]

    # A transaction that has written, or runs a statement begun before the fence. An idle
    # one that has written nothing is checked at its next statement: it is left alone.
    opened = {
        r["trx_id"]
        for r in writers()
        if r["trx_id"] and (r["trx_rows_modified"] or r["command"] != "Sleep")
    }
    deadline = time.monotonic() + DRAIN_SECONDS
    while (left := [r for r in writers() if r["trx_id"] in opened]) and time.monotonic() < deadline:
        time.sleep(0.02)
    using = [r for r in writers() if r["db"] in fenced]
    sessions = {int(str(r["id"])) for r in [*left, *using]}
    return sum(host.end_session(session) for session in sessions)


def _like(pattern: str) -> re.Pattern[str] | None:
    """A grant's database pattern (``%``, ``_``, ``\\_``) as a regular expression; None for a
    plain name (a grant on that database itself, not through a pattern)."""
    if not re.search(r"(?<!\\)[%_]", pattern):
        return None
    out = []
    escaped = False
    for char in pattern:
        if escaped:
            out.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out))
