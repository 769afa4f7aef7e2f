"""Emergency failover (``plan_emergency_failover``): a master that cannot be reached hands
its shards to a replica, as Vitess's EmergencyReparentShard and orchestrator do it. Before
anything changes, the plan refuses, with its reason, unless it can show that promotion
loses no acknowledged write:

- the master is down from every vantage point: the operator's connections get
  no answer (refused or timed out: a server that answers "too many connections"
  or "access denied" is alive), and no replica is still connected to it
  (orchestrator's holistic check: a master cut off from the operator alone is
  not down);
- the candidate was replicating from the failed master until it failed (its
  I/O thread still trying to reconnect, not stopped by hand or on an error),
  its SQL thread runs, it has received every transaction any other replica
  received, domain by domain, and it wrote nothing of its own (no errant GTID).

Masters run semi-synchronously with no fallback (``SEMI_SYNC_TIMEOUT_MS``), so a
write a client saw acknowledged is in a replica's relay log. ``accept_data_loss``
promotes a candidate that fails the second check anyway, and the journal names
the GTIDs that may be lost. Steps:

1. confirm the master is still down (the same check);
2. fence it (``fence(host, address)``: on the local cluster its process is
   stopped, in the AWS deploy its security groups swapped and its instance
   stopped), so that a process that missed the new map cannot write there;
3. stop every replica's I/O thread and wait until each has applied what it
   received;
4. stop replication on the candidate, arm its semi-sync (``arm_semi_sync``: commits
   wait for the first replica that connects, alone until then) and clear its
   ``read_only``; the pair health check (``pairs``) reports it until a replica is
   rebuilt;
5. publish the shard map with it as master, the old master out of service.

The old master is fenced three times over: by the hook, by ``read_only`` (every
server starts so, and refuses writes until an operator says otherwise), and by
the shard map (no process writes to a host the map in force does not name as a
shard's master: ``shardstore.fence``). It comes back into service only after it
has been rebuilt as a replica of the new master (``host-service HOST --in``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..exceptions import InvalidTopology
from . import documents
from .config_source import ConfigSource, Revision
from .failover import Connect
from .fencing import Fence
from .mysql_hosts import NO_ANSWER, HostError, MySQLHost, ReplicaStatus, endpoint, gtid_domains
from .plans import Plan, Step
from .publish import publish_step


def plan_emergency_failover(
    source: ConfigSource,
    *,
    host: str,
    author: str,
    fence: Fence | None,
    connect: Connect = MySQLHost,
    apply_seconds: float = 30.0,
    accept_data_loss: bool = False,
) -> Plan:
    """The plan to hand the ranges of ``host``, which cannot be reached, to the one of its
    replicas that has every acknowledged write; refuses (``InvalidTopology`` or
    ``HostError``, with the reason) when that cannot be shown."""
    current = source.current(documents.SHARDS)
    document = current.document
    addresses = document["hosts"]
    mastered = [r for r in document["ranges"] if r["master"] == host]
    if not mastered:
        raise InvalidTopology(f"host {host} is the master of no range")
    if fence is None:
        raise InvalidTopology(
            f"no fence command is set (PINBOARD_FENCE_COMMAND): {host} may be alive and"
            " reached by a process that missed the new map"
        )
    candidates = sorted({r["replica"] for r in mastered if r.get("replica")})
    if not candidates:
        raise InvalidTopology(f"{host} has no replica to promote")
    views = _down_from_everywhere(connect, host, addresses, candidates)
    replica, loss = _choose(host, views, accept_data_loss=accept_data_loss)
    ranked = ", ".join(f"{name} received {views[name].received or 'nothing'}" for name in views)
    params = {
        "host": host,
        "replica": replica,
        "replicas": sorted(views),
        "ranked": ranked,
        "emergency": True,
        "data_loss": loss,
        "base": current.version,
    }
    return _plan(source, current, params, author=author, fence=fence, connect=connect, apply_seconds=apply_seconds)  # fmt: skip


def plan_emergency_again(
    source: ConfigSource,
    params: dict[str, Any],
    *,
    author: str,
    fence: Fence | None,
    connect: Connect = MySQLHost,
    apply_seconds: float = 30.0,
) -> Plan:
    """The plan of an emergency failover whose run died, made again as it was chosen (its
    journal's ``params``), from the shard map it began with: what ``resume`` finishes
    once the replica was promoted. (Before that, ``abort`` it and fail over again.)"""
    if fence is None:
        raise InvalidTopology("no fence command is set (PINBOARD_FENCE_COMMAND)")
    base = source.revision(documents.SHARDS, int(params["base"]))
    return _plan(source, base, params, author=author, fence=fence, connect=connect, apply_seconds=apply_seconds)  # fmt: skip


def _plan(
    source: ConfigSource,
    current: Revision,
    params: dict[str, Any],
    *,
    author: str,
    fence: Fence,
    connect: Connect,
    apply_seconds: float,
) -> Plan:
    host, replica, replicas, loss = params["host"], params["replica"], params["replicas"], params["data_loss"]  # fmt: skip
    document = current.document
    addresses = document["hosts"]
    mastered = [r for r in document["ranges"] if r["master"] == host]
    ranges = []
    for entry in document["ranges"]:
        if entry["master"] == host:
            entry = {"range": entry["range"], "master": replica}
        elif entry.get("replica") == host:
            entry = {"range": entry["range"], "master": entry["master"]}
        ranges.append(entry)
    out = sorted({*document.get("out_of_service", []), host})
    new = documents.validate(
        documents.SHARDS, {**document, "ranges": ranges, "out_of_service": out}
    )

    def confirm() -> str:
        _down_from_everywhere(connect, host, addresses, replicas)
        note = f"{host} gives no answer, and no replica receives from it"
        return f"{note}; ACCEPTED DATA LOSS: {loss}" if loss else note

    def fence_host() -> str:
        return fence(host, addresses[host])

    def apply_received() -> str:
        notes = []
        for name in replicas:
            with connect(addresses[name]) as r:
                r.stop_receiving()
                notes.append(f"{name} applied {r.apply_received(apply_seconds) or 'nothing'}")
        return "; ".join(notes)

    def promote() -> str:
        with connect(addresses[replica]) as r:
            r.stop_replicating()
            r.arm_semi_sync()  # before its first write: the rebuilt replica's acks are awaited
            r.set_read_only(False)
        return (
            f"{replica} writable, replicating from no one; semi-sync armed: its commits wait"
            " for the first replica that connects (`rebuild`)"
        )

    shards = ", ".join(f"{r['range'][0]}..{r['range'][1]}" for r in mastered)
    return Plan(
        "failover",
        f"emergency failover of {host} to {replica} (shards {shards})"
        + (f"; accepted data loss: {loss}" if loss else ""),
        [
            Step(f"confirm {host} is down, from the operator and every replica", (host,), confirm),
            Step(f"fence {host}", (host,), fence_host),
            Step(
                f"stop receiving from {host}; apply all that was received ({params['ranked']})",
                tuple(replicas),
                apply_received,
            ),
            # Its replication reset, the replica cannot follow the old master again: the
            # failover stands from here, and a run that died is resumed, not aborted.
            Step(
                f"stop replication on {replica} and clear its read_only",
                (replica,),
                promote,
                commits=True,
            ),
            publish_step(
                source,
                current,
                new,
                author=author,
                reason=f"emergency failover of {host} to {replica}",
                change=f"shards {shards} mastered by {replica}; {host} out of service",
                hosts=(host, replica),
            ),
        ],
        params,
    )


@dataclass(frozen=True)
class _View:
    """A replica of the failed master, as it sees its replication."""

    status: ReplicaStatus
    own_writes: str  # its binary log's GTIDs of its own server id, past what it received
    refusal: str  # why it may not be promoted without losing data ("" if it may)

    @property
    def received(self) -> str:
        return self.status.received


def _down_from_everywhere(
    connect: Connect, host: str, addresses: dict[str, str], replicas: list[str]
) -> dict[str, _View]:
    """Raise unless ``host`` is down both for the operator and for every replica; the
    replicas' views of their replication, by name (those that answer)."""
    try:
        with connect(addresses[host]):
            pass
    except HostError as exc:
        if exc.errno not in NO_ANSWER:
            raise HostError(
                f"{host} answers with a refusal, so it is alive: {exc}; see to that instead"
            ) from None
    else:
        raise InvalidTopology(
            f"{host} answers: fail it over as planned (without --emergency), which loses nothing"
        )
    source = "{}:{}".format(*endpoint(addresses[host]))
    views: dict[str, _View] = {}
    for name in replicas:
        try:
            with connect(addresses[name]) as r:
                status = r.replica_status()
                own = _own_writes(r, status)
        except HostError:
            continue  # down too: not a candidate
        if status is None:
            raise HostError(f"{name} replicates from no one: it cannot stand in for {host}")
        if status.source != source:
            raise HostError(f"{name} replicates from {status.source}, not from {host}")
        if status.io_state not in ("Connecting", "No"):  # "Yes", or "Preparing" to connect
            raise HostError(
                f"{name} still receives from {host} (its I/O thread: {status.io_state}):"
                f" {host} is alive, cut off from the operator only (a replica notices a"
                " silent master within slave_net_timeout)"
            )
        refusal = ""
        if not status.lost_source:
            refusal = (
                f"{name} was not replicating from {host} when it failed: its I/O thread is"
                f" stopped ({status.last_error or 'by hand'})"
            )
        elif not status.sql_running:
            refusal = f"{name}'s SQL thread is stopped: {status.last_error or 'by hand'}"
        views[name] = _View(status, own, refusal)
    if not views:
        raise HostError(f"no replica of {host} answers ({', '.join(replicas)})")
    return views


def _own_writes(replica: MySQLHost, status: ReplicaStatus | None) -> str:
    """The GTIDs in ``replica``'s binary log that it wrote itself after what it received:
    errant transactions, which the failed master never had."""
    received = gtid_domains(status.received if status else "")
    me = replica.server_id()
    errant = [
        f"{domain}-{server}-{sequence}"
        for domain, (server, sequence) in gtid_domains(replica.gtid_binlog_pos()).items()
        if server == me and sequence > received.get(domain, (0, 0))[1]
    ]
    return ",".join(errant)


def _choose(host: str, views: dict[str, _View], *, accept_data_loss: bool) -> tuple[str, str]:
    """The replica to promote: it received, in every domain, at least what every other
    did. With it, what may be lost ("" when nothing can be)."""
    received = {name: gtid_domains(view.received) for name, view in views.items()}
    domains = {d for positions in received.values() for d in positions}

    def behind(name: str) -> list[int]:
        return [
            d
            for d in sorted(domains)
            if any(
                received[name].get(d, (0, 0))[1] < other.get(d, (0, 0))[1]
                for other in received.values()
            )
        ]

    complete = [name for name in sorted(views) if not behind(name)]
    if not complete:
        raise HostError(
            f"no replica of {host} received everything the others did: "
            + "; ".join(f"{n} behind in domains {behind(n)}" for n in sorted(views))
        )
    replica = complete[0]
    view = views[replica]
    if view.own_writes:
        raise HostError(
            f"{replica} has transactions of its own that {host} never had (errant GTIDs"
            f" {view.own_writes}): promoting it would diverge the shards"
        )
    if not view.refusal:
        return replica, ""
    if not accept_data_loss:
        raise HostError(
            f"{view.refusal}; promoting it may lose acknowledged writes. Refused: rerun with"
            " --accept-data-loss to promote it anyway"
        )
    gap = ", ".join(
        f"domain {d}: every transaction after {d}-{s}-{n}"
        for d, (s, n) in sorted(received[replica].items())
    )
    return replica, f"{view.refusal}; GTIDs {host} may have had and {replica} lacks: {gap or 'any'}"
