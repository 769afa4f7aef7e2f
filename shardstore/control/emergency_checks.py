"""What an emergency operation checks before it changes anything: that the master it gives
up on takes no write any client could see acknowledged that the server it hands the shards
to lacks (``emergency.py``'s failover, ``split_emergency.py``'s cut-back of a split).

- ``cut_off``: the master is down from every vantage point (the operator's connections get
  no answer, and no replica's I/O thread is connected to it), or it answers but no replica
  receives from it: semi-sync with no fallback then acknowledges none of its commits, so
  fencing it loses nothing acknowledged;
- ``choose``: the replica that received, domain by domain, everything every other one
  received, with no write of its own; with what may be lost when it is taken anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..exceptions import InvalidTopology
from .mysql_hosts import NO_ANSWER, HostError, MySQLHost, ReplicaStatus, endpoint, gtid_domains

Connect = Callable[[str], MySQLHost]


def answers(connect: Connect, host: str, address: str) -> bool:
    """Whether ``host`` answers the operator; False when nothing answers (refused, timed
    out). A server that answers with a refusal (too many connections, access denied) is
    alive: HostError."""
    try:
        with connect(address):
            return True
    except HostError as exc:
        if exc.errno not in NO_ANSWER:
            raise HostError(
                f"{host} answers with a refusal, so it is alive: {exc}; see to that instead"
            ) from None
    return False


def binlog_senders(master: MySQLHost) -> int:
    """How many replicas ``master`` sends its binary log to now (its Binlog Dump threads)."""
    return int(
        master.value(
            "SELECT COUNT(*) FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%'"
        )
    )


@dataclass(frozen=True)
class View:
    """A replica of the failed master, as it sees its replication."""

    status: ReplicaStatus | None  # None: it replicates from no one (its replication reset)
    #: What it received (``Gtid_IO_Pos``); replicating from no one, what it applied
    #: (``gtid_slave_pos``): what it received past that went with its relay log.
    received: str
    own_writes: str  # its binary log's GTIDs of its own server id, past what it received
    refusal: str  # why it may not be promoted without losing data ("" if it may)


def cut_off(
    connect: Connect, host: str, addresses: dict[str, str], replicas: list[str]
) -> tuple[dict[str, View], bool]:
    """Raise unless no replica receives from ``host`` and either it gives the operator no
    answer, or it answers and every replica that could still receive from it says it does
    not; the replicas' views of their replication, by name (those that answer), and
    whether ``host`` answers."""
    alive = answers(connect, host, addresses[host])
    source = "{}:{}".format(*endpoint(addresses[host]))
    views: dict[str, View] = {}
    silent = []
    for name in replicas:
        try:
            with connect(addresses[name]) as r:
                status = r.replica_status()
                received = (
                    status.received
                    if status is not None
                    else str(r.value("SELECT @@global.gtid_slave_pos") or "")
                )
                own = own_writes(r, received)
        except HostError:
            silent.append(name)  # down too, or cut off from the operator: not a candidate
            continue
        if status is None:
            views[name] = View(
                None,
                received,
                own,
                f"{name} replicates from no one: its replication was reset (as an emergency"
                f" failover's promotion does), and what it received from {host} but had not"
                f" applied went with its relay log, so nothing shows it holds every"
                f" acknowledged write (if a failover of {host} left open reset it,"
                f" `shardstore resume OP` finishes that: `shardstore operations`)",
            )
            continue
        if status.source != source:
            raise HostError(f"{name} replicates from {status.source}, not from {host}")
        if status.io_state not in ("Connecting", "No"):  # "Yes", or "Preparing" to connect
            if alive:
                raise InvalidTopology(
                    f"{host} answers: fail it over as planned (without --emergency), which"
                    f" loses nothing ({name} still receives from it)"
                )
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
        views[name] = View(status, received, own, refusal)
    if not views:
        raise HostError(f"no replica of {host} answers ({', '.join(replicas)})")
    if alive and silent:
        # A replica the operator cannot ask may still receive from it, and acknowledge its
        # commits: the master says whether it sends its binary log to anyone.
        with connect(addresses[host]) as m:
            sending = binlog_senders(m)
        if sending:
            raise HostError(
                f"{host} answers and sends its binary log to {sending} replica(s), and"
                f" {', '.join(silent)} does not answer: it may receive from {host} and"
                " acknowledge its commits"
            )
    return views, alive


def own_writes(replica: MySQLHost, received: str) -> str:
    """The GTIDs in ``replica``'s binary log that it wrote itself after what it received:
    errant transactions, which the failed master never had."""
    positions = gtid_domains(received)
    me = replica.server_id()
    errant = [
        f"{domain}-{server}-{sequence}"
        for domain, (server, sequence) in gtid_domains(replica.gtid_binlog_pos()).items()
        if server == me and sequence > positions.get(domain, (0, 0))[1]
    ]
    return ",".join(errant)


def choose(host: str, views: dict[str, View], *, accept_data_loss: bool) -> tuple[str, str]:
    """The replica to promote: it received, in every domain, at least what every other
    did (one with no write of its own and no refusal before the others). With it, what
    may be lost ("" when nothing can be)."""
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

    complete = sorted(
        (name for name in views if not behind(name)),
        key=lambda name: (bool(views[name].own_writes), bool(views[name].refusal), name),
    )
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
    return replica, f"{view.refusal}; GTIDs {host} may have had and {replica} lacks: {gap(received[replica])}"  # fmt: skip


def gap(received: dict[int, tuple[int, int]]) -> str:
    """What may be lost past ``received`` (a position by domain): every later GTID."""
    return (
        ", ".join(
            f"domain {d}: every transaction" + (f" after {d}-{s}-{n}" if n else "")
            for d, (s, n) in sorted(received.items())
        )
        or "any"
    )
