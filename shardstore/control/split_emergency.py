"""A split's emergency cut-back (``plan_split_emergency``: ``split --revert V --emergency``):
the split's new master is lost before ``cleanup``, with no replica to fail over to (the
host the shards left follows it through the split's reverse stream, ``reverse_stream``,
which is no replica in the map), and the planned revert needs that stream running. The old
host holds what the stream received, but the stream acknowledges nothing (only a replica the
map names may release a commit), so the new master's last commits may be on no other
server: the cut-back always needs ``accept_data_loss``, and the journal names what may be
lost. So the shards go back to the old host, as an emergency failover hands a master's
shards to its replica, and with the same checks (``emergency_checks``):

- the new master is down from every vantage point: the operator's connections get no
  answer, and the reverse stream's I/O thread is not connected to it. One that answers is
  refused: a split's new master commits alone when no replica is connected (its semi-sync
  armed, with a fallback), so with the stream gone it may have acknowledged writes the old
  host lacks; revert as planned once the stream runs again;
- the stream was receiving until the new master failed (its I/O thread lost its source,
  not stopped by hand or on an error), and it can apply what it received (its SQL thread
  not stopped on an error; one stopped by hand is started again): the journal says so;
- the new master masters the split's moved shards and nothing else, with no replica of its
  own (with one, fail it over instead: ``failover HOST --emergency``).

What this cannot see: the new master's semi-sync falls back while no replica is connected,
so writes it acknowledged after it lost the stream, while it was still reached by the site
(cut off from the old host and the operator alone), are on no other server. Steps:

1. confirm the new master is down, from the operator and from the stream (the same check);
2. fence it (the fence command, ``PINBOARD_FENCE_COMMAND``, as an emergency failover does);
3. stop the stream's I/O thread and wait until the old host has applied all it received
   (its table filter set again if a restart lost it: only the moved shards are written);
4. stop and remove the stream: the commit point. The old host cannot follow the new master
   again, so from here the cut-back stands: a run that dies after it, or inside it once the
   stream is gone, is resumed (``resume``), never undone;
5. give the site's writes on the moved shards back on the old host (``grant_fence``);
6. publish the map: the moved shards mastered by the old host, the new master out of
   service until it is rebuilt as a replica (``rebuild``: it is wiped, its copies with it).
"""

from __future__ import annotations

from typing import Any

from ..durability import of_master
from ..exceptions import InvalidTopology
from ..replicas import replicas_of, with_replicas
from ..topology import database_name
from . import documents, reverse_stream
from .config_source import ConfigSource, Revision
from .emergency_checks import Connect, answers, gap
from .fencing import Fence
from .grant_fence import fence_step
from .mysql_hosts import HostError, MySQLHost, ReplicaStatus, endpoint, gtid_domains
from .plans import Plan, Step
from .publish import publish_step
from .split import shards_in, spans, split_revision
from .split_revert import merge_ranges

#: How long the old host is given to apply what the stream received.
APPLY_SECONDS = 30.0


def plan_split_emergency(
    source: ConfigSource,
    *,
    split: int,
    author: str,
    fence: Fence | None,
    connect: Connect = MySQLHost,
    accept_data_loss: bool = False,
) -> Plan:
    """The plan to give the shards of split ``split`` back to the host they left, their new
    master being lost; refuses (``InvalidTopology`` or ``HostError``, with the reason)
    unless the old host can be shown to hold every write the new master acknowledged."""
    after, _ = split_revision(source, split)
    current = source.current(documents.SHARDS)
    words = after.reason.split()  # "split HOST onto REPLICA"
    host, replica = words[1], words[3]
    moved = [r["range"] for r in after.document["ranges"] if r["master"] == replica]
    _check_map(current.document, split, host, replica, moved)
    if fence is None:
        raise InvalidTopology(
            f"no fence command is set (PINBOARD_FENCE_COMMAND): {replica} may be alive and"
            " reached by a process that missed the new map"
        )
    row, status, applied = _lost(connect, current.document, split, host, replica)
    refusal = _refusal(row, status, split, host, replica)
    # No server acknowledged its commits: the stream receives them after the fact.
    unacknowledged = f"{replica} had no replica: its commits were acknowledged by no other server, and {host}'s stream received them asynchronously"  # fmt: skip
    refusal = "; ".join(filter(None, (refusal, unacknowledged)))
    policy = of_master(current.document, replica)
    if not policy.strict:  # what it acknowledged once degraded is on no other server
        risk = f"{replica}'s durability is {policy}: once nothing acknowledged in time it committed alone"  # fmt: skip
        refusal = "; ".join(filter(None, (refusal, risk)))
    if refusal and not accept_data_loss:
        raise HostError(
            f"{refusal}; cutting back may lose acknowledged writes. Refused: rerun with"
            " --accept-data-loss to cut back anyway"
        )
    loss = f"{refusal}; GTIDs {replica} may have written and {host} lacks: {gap(applied)}" if refusal else ""  # fmt: skip
    params = {
        "split": split,
        "host": host,
        "replica": replica,
        "moved": moved,
        "emergency": True,
        "data_loss": loss,
        "base": current.version,
    }
    return _plan(source, current, params, author=author, fence=fence, connect=connect)


def plan_again(
    source: ConfigSource,
    params: dict[str, Any],
    *,
    author: str,
    fence: Fence,
    connect: Connect = MySQLHost,
) -> Plan:
    """The plan of a cut-back whose run died, made again as it was chosen (its journal's
    ``params``), from the shard map it began with (``resume`` finishes it once the stream
    was removed; before that, ``abort`` it and cut back again)."""
    base = source.revision(documents.SHARDS, int(params["base"]))
    return _plan(source, base, params, author=author, fence=fence, connect=connect)


def _check_map(
    document: dict[str, Any], split: int, host: str, replica: str, moved: list[list[int]]
) -> None:
    """Refuse unless ``replica`` masters the split's moved shards, and no others, with no
    replica of its own."""
    ranges = [r for r in document["ranges"] if r["master"] == replica]
    if sorted(shards_in([r["range"] for r in ranges])) != shards_in(moved):
        raise InvalidTopology(
            f"{replica} does not master exactly the shards split {split} moved ({spans(moved)}):"
            " cannot cut back"
        )
    theirs = sorted({name for r in ranges for name in replicas_of(r)})
    if theirs:
        raise InvalidTopology(
            f"{replica} has a replica ({', '.join(theirs)}): fail it over instead"
            f" (`failover {replica} --emergency`), {host}'s copies are not the only ones"
        )


def _lost(
    connect: Connect, document: dict[str, Any], split: int, host: str, replica: str
) -> tuple[dict[str, Any], ReplicaStatus, dict[int, tuple[int, int]]]:
    """Raise unless ``replica`` is down for the operator and for ``host``'s reverse stream;
    the stream's row and state, and what ``host`` applied from others by GTID domain (its own
    domain left out: ``replica`` wrote in one of its own)."""
    addresses = document["hosts"]
    if answers(connect, replica, addresses[replica]):
        raise InvalidTopology(
            f"{replica} answers: revert split {split} as planned (without --emergency) once"
            f" {host}'s reverse stream receives from it again. A split's new master commits"
            f" alone while no replica is connected, so with the stream gone it may have"
            f" acknowledged writes {host} lacks"
        )
    name = reverse_stream.connection(split)
    with connect(addresses[host]) as m:
        row = reverse_stream.status(m, split)
        if row is None:
            raise HostError(
                f"{host} has no reverse stream {name} (cleaned up, or removed by a cut-back"
                " left open: `shardstore operations`, then `shardstore resume OP`)"
            )
        applied = gtid_domains(str(m.value("SELECT @@global.gtid_slave_pos") or ""))
        applied.pop(int(m.value("SELECT @@global.gtid_domain_id")), None)
    domain = document.get("domains", {}).get(replica)  # the one it wrote in, if the map says
    if domain is not None:
        applied = {int(domain): applied.get(int(domain), (0, 0))}
    status = ReplicaStatus(
        source=f"{row.get('Master_Host')}:{row.get('Master_Port')}",
        io_running=row.get("Slave_IO_Running") == "Yes",
        sql_running=row.get("Slave_SQL_Running") == "Yes",
        lag_seconds=None,
        last_error=str(row.get("Last_SQL_Error") or ""),
        io_state=str(row.get("Slave_IO_Running") or "No"),
        io_errno=int(row.get("Last_IO_Errno") or 0),
    )
    if status.source != "{}:{}".format(*endpoint(addresses[replica])):
        raise HostError(f"{name} on {host} follows {status.source}, not {replica}")
    if status.io_state not in ("Connecting", "No"):
        raise HostError(
            f"{name} on {host} still receives from {replica} (its I/O thread:"
            f" {status.io_state}): {replica} is alive, cut off from the operator only"
        )
    return row, status, applied


def _refusal(
    row: dict[str, Any], status: ReplicaStatus, split: int, host: str, replica: str
) -> str:
    """Why ``host``'s stream may lack what ``replica`` acknowledged ("" if it cannot). A SQL
    thread stopped by hand is no reason: the cut-back starts it and applies what it has."""
    name = reverse_stream.connection(split)
    if not status.lost_source:
        return (
            f"{name} on {host} was not receiving from {replica} when it failed: its I/O"
            f" thread is stopped ({row.get('Last_IO_Error') or 'by hand'})"
        )
    if not status.sql_running and status.last_error:
        return f"{name} on {host} cannot apply what it received: {status.last_error}"
    return ""


def apply_received(
    old: MySQLHost, split: int, shards: list[int], timeout: float, *, accepted: bool
) -> str:
    """Stop ``old``'s stream for ``split`` receiving and wait until it has applied all it
    received, to ``shards`` only (the filter set again if a restart lost it)."""
    name = reverse_stream.connection(split)
    if reverse_stream.status(old, split) is None:
        raise HostError(f"{old.host}:{old.port} has no reverse stream {name}")
    old.query(f"STOP SLAVE '{name}' IO_THREAD")
    row = reverse_stream.status(old, split) or {}
    wanted = reverse_stream.patterns(shards)
    if row.get("Replicate_Wild_Do_Table") != wanted or row.get("Slave_SQL_Running") != "Yes":
        old.query(f"STOP SLAVE '{name}' SQL_THREAD")
        old.query(f"SET GLOBAL {name}.replicate_wild_do_table = %s", (wanted,))
        old.query(f"START SLAVE '{name}' SQL_THREAD")
    at = (str(row.get("Master_Log_File") or ""), int(row.get("Read_Master_Log_Pos") or 0))
    done = old.value("SELECT MASTER_POS_WAIT(%s, %s, %s, %s)", (*at, timeout, name))
    if done is not None and int(done) >= 0:
        return f"{name} applied all it received, up to {at[0]}:{at[1]}"
    left = reverse_stream.status(old, split) or {}
    why = f"{name} did not apply all it received ({at[0]}:{at[1]}) in {timeout:g}s: {left.get('Last_SQL_Error') or 'not running'}"  # fmt: skip
    if not accepted:
        raise HostError(why)
    return f"{why}; ACCEPTED DATA LOSS"


def _plan(
    source: ConfigSource,
    current: Revision,
    params: dict[str, Any],
    *,
    author: str,
    fence: Fence,
    connect: Connect,
) -> Plan:
    split, host, replica, moved, loss = (params[k] for k in ("split", "host", "replica", "moved", "data_loss"))  # fmt: skip
    document = current.document
    addresses = document["hosts"]
    shards = shards_in(moved)
    name = reverse_stream.connection(split)
    # The host's replicas hold the moved shards too: the stream's writes are in its binary log.
    kept = sorted({n for r in document["ranges"] if r["master"] == host for n in replicas_of(r)})
    ranges = [
        (with_replicas({**r, "master": host}, kept) if r["master"] == replica else r)
        for r in document["ranges"]
    ]
    out = sorted({*document.get("out_of_service", []), replica})
    restored = {k: v for k, v in document.items() if k != "read_only"}
    restored = documents.validate(
        documents.SHARDS, {**restored, "ranges": merge_ranges(ranges), "out_of_service": out}
    )

    def confirm() -> str:
        _lost(connect, document, split, host, replica)
        note = f"{replica} gives no answer, and {name} on {host} does not receive from it"
        return f"{note}; ACCEPTED DATA LOSS: {loss}" if loss else note

    def fence_replica() -> str:
        return fence(replica, addresses[replica])

    def apply() -> str:
        with connect(addresses[host]) as m:
            return apply_received(m, split, shards, APPLY_SECONDS, accepted=bool(loss))

    def remove() -> str:
        with connect(addresses[host]) as m:
            gone = reverse_stream.stop(m, split)
        return f"{name} {'stopped and removed' if gone else 'was gone already'} on {host}: it cannot follow {replica} again"  # fmt: skip

    def removed() -> bool:
        with connect(addresses[host]) as m:
            return reverse_stream.status(m, split) is None

    return Plan(
        "split-revert",
        f"emergency cut-back of split {split}: shards {spans(moved)} back to {host}, {replica} lost"
        + (f"; accepted data loss: {loss}" if loss else ""),
        [
            Step(
                f"confirm {replica} is down, from the operator and from {name} on {host}",
                (host, replica),
                confirm,
            ),
            Step(f"fence {replica}", (replica,), fence_replica),
            Step(f"stop {name} receiving on {host}; apply all it received", (host,), apply),
            # Gone, the stream cannot follow the new master again: the cut-back stands from
            # here, and a run that died is resumed, not aborted (as an emergency failover's
            # replication reset). Removing it is all this step does.
            Step(
                f"stop and remove {name} on {host}: it cannot follow {replica} again",
                (host,),
                remove,
                commits=True,
                took_effect=removed,
            ),
            fence_step(
                connect,
                host,
                addresses[host],
                [database_name(s) for s in shards],
                spans(moved),
                give_back=True,
            ),
            publish_step(
                source,
                current,
                restored,
                author=author,
                reason=f"emergency cut-back of split {split}: shards {spans(moved)} back to {host}",
                change=f"shards {spans(moved)} mastered by {host}; {replica} out of service",
                hosts=(host, replica),
                commits=True,  # past the commit point already: says whether it is in force
            ),
        ],
        params,
    )
