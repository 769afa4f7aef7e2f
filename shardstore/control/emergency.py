"""Emergency failover (``plan_emergency_failover``): a master that cannot be reached, or that
no replica can receive from any more, hands its shards to a replica, as Vitess's
EmergencyReparentShard and orchestrator do it. Before anything changes, the plan refuses,
with its reason, unless it can show that promotion loses no acknowledged write
(``emergency_checks``):

- no replica is connected to the master (orchestrator's holistic check: a master cut off
  from the operator alone is not down), and either the operator's connections get no
  answer (refused or timed out: a server that answers "too many connections" or "access
  denied" is alive), or the master answers and every replica says it receives nothing
  from it (cut off from its replicas only: the site and the operator still reach it). A
  master that answers while a replica still receives from it is failed over as planned;
  if a replica the operator cannot ask might still receive from it, the master must send
  its binary log to no one;
- the candidate was replicating from the failed master until it failed (its
  I/O thread still trying to reconnect, not stopped by hand or on an error),
  its SQL thread runs, it has received every transaction any other replica
  received, domain by domain, and it wrote nothing of its own (no errant GTID); and
  every other replica answers (the master's commits waited for any one of them, so a
  silent one may hold an acknowledged write alone).

Masters of a ``strict`` range (``shardstore/durability.py``) run semi-synchronously with
no fallback, so a write a client saw acknowledged is in a replica's relay log, and a
master no replica receives from acknowledges nothing: its commits wait. (A
``degrade-after`` range's master commits alone once no replica acknowledged in time: its
failover is refused without ``accept_data_loss``, which names that risk.) A relay log can still be lost (a
replica's threads started while both were stopped, its master dead: ``relay_log``), so a
candidate whose threads are both stopped applies the one it kept first, one restarted
since is refused, and so is one that received less than the master's replicas had when
the fleet probe last recorded them (``acknowledged``; ``_weighed``). ``accept_data_loss``
promotes a candidate that fails the second check anyway, and the journal names the
GTIDs that may be lost. Steps:

1. confirm the master is still down, or cut off from every replica (the same check);
2. fence it: if it answers, set its ``read_only`` and end its client sessions first (a
   commit waiting for an acknowledgement ends with its session, never acknowledged; it
   holds the commit lock ``read_only`` waits for, so the sessions go first); then the
   fence command (``fence(host, address)``: on the local cluster its process is stopped,
   in the AWS deploy its security groups swapped and its instance stopped), so that a
   process that missed the new map cannot write there;
3. stop every replica's I/O thread and wait until each has applied what it received;
4. stop replication on the candidate and forget its source (``RESET SLAVE ALL``):
   the commit point. It cannot follow the old master again, so from here the failover
   stands: a run that dies after it, or inside it once the reset is done (the step's
   ``took_effect``: the candidate replicates from no one), is resumed, never undone;
5. arm its semi-sync (``arm_semi_sync``: commits wait for the first replica that
   connects, alone until then) and clear its ``read_only``; this step can run again, so
   ``resume`` finishes a candidate left promoted in part;
6. make the master's other replicas follow it (``MASTER_USE_GTID=slave_pos``: each
   applied all it received, which the candidate holds too), and once one does, its
   commits wait for their acknowledgements with no fallback: the range is fully
   writable at once. One that cannot follow is noted and stays named, for the pair health
   check (``pairs``) and the guard to see; with none, ``pairs`` reports the master until a
   replica is rebuilt;
7. publish the shard map with it as master, the others its replicas, the old master out
   of service (a run that died inside the publish is resumed past it: it says whether it
   is in force).

A replica that replicates from no one (its replication reset: a run killed inside step 4
whose entry was then closed, or a hand ``RESET SLAVE ALL``) is still weighed as a
candidate, by what it applied (``gtid_slave_pos``) and its own writes, but what it had
received and not applied went with its relay log: nothing shows it holds every
acknowledged write, so it is promoted only with ``accept_data_loss`` (the journal names
what may be lost), and never when it is behind another replica. The refusal says that a
run left open which promoted it is finished by ``resume``. Among replicas that are all
complete, one with no write of its own and nothing against it is chosen first.

The old master is fenced three times over: by the hook, by ``read_only`` (every
server starts so, and refuses writes until an operator says otherwise), and by
the shard map (no process writes to a host the map in force does not name as a
shard's master: ``shardstore.fence``). It comes back into service only after it
has been rebuilt as a replica of the new master (``rebuild``, then ``host-service HOST
--in``): one cut off from its replicas holds commits no replica received (never
acknowledged), so it is never pointed at the new master as it is.

``plan_emergency_again`` also plans again a split's emergency cut-back
(``split_emergency.py``), whose run it tells by its ``split``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..durability import of_master
from ..exceptions import InvalidTopology
from ..replicas import replicas_of, with_replicas
from . import acknowledged, documents, relay_log, split_emergency
from .config_source import ConfigSource, Revision
from .emergency_checks import Connect, View, choose, cut_off
from .fencing import Fence, freeze
from .mysql_hosts import HostError, MySQLHost
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
    """The plan to hand the ranges of ``host``, which cannot be reached or is cut off from
    every replica, to the one of its replicas that has every acknowledged write; refuses
    (``InvalidTopology`` or ``HostError``, with the reason) when that cannot be shown."""
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
    candidates = sorted({name for r in mastered for name in replicas_of(r)})
    if not candidates:
        raise InvalidTopology(f"{host} has no replica to promote")
    views, alive = _weighed(source, current, connect, host, addresses, candidates, apply_seconds)
    replica, loss = choose(host, views, accept_data_loss=accept_data_loss)
    if silent := [name for name in candidates if name not in views]:
        # Its commits waited for any one replica: the silent one may hold some alone.
        risk = f"{', '.join(silent)} does not answer, and may have acknowledged writes of {host} that {replica} lacks"  # fmt: skip
        if not accept_data_loss:
            raise HostError(f"{risk}; --accept-data-loss to promote {replica} anyway")
        loss = "; ".join(filter(None, (loss, risk)))
    policy = of_master(document, host)
    if not policy.strict:  # what it acknowledged once degraded is on no replica
        risk = f"{host}'s durability is {policy}: once no replica acknowledged in time it committed alone, and may have acknowledged writes no replica has"  # fmt: skip
        if not accept_data_loss:
            raise InvalidTopology(f"{risk}; --accept-data-loss to promote {replica} anyway")
        loss = "; ".join(filter(None, (loss, risk)))
    ranked = ", ".join(
        f"{name} {'applied' if views[name].status is None else 'received'}"
        f" {views[name].received or 'nothing'}"
        for name in views
    )
    params = {
        "host": host,
        "replica": replica,
        "replicas": sorted(views),
        # replicating from no one when planned: nothing to stop or apply on them
        "reset": sorted(name for name, view in views.items() if view.status is None),
        "ranked": ranked,
        "emergency": True,
        "answers": alive,  # cut off from its replicas only
        "data_loss": loss,
        "base": current.version,
    }
    return _plan(source, current, params, author=author, fence=fence, connect=connect, apply_seconds=apply_seconds)  # fmt: skip


def _weighed(
    source: ConfigSource,
    current: Revision,
    connect: Connect,
    host: str,
    addresses: dict[str, str],
    candidates: list[str],
    apply_seconds: float,
) -> tuple[dict[str, View], bool]:
    """``cut_off``'s views of the candidates, with what their relay logs and the fleet
    probe's record show. A candidate whose two replication threads are stopped (restarted:
    replicas start with ``skip_slave_start``; or stopped by hand) first applies its kept
    relay log (``relay_log.apply_kept``), so it is judged on all it received; one
    restarted is refused, as nothing shows it replicated until ``host`` failed. One that
    received less than ``host``'s replicas had when the probe last recorded them
    (``acknowledged``) is refused, with the gap."""
    restarted: dict[str, str] = {}
    for name in candidates:
        try:
            candidate = connect(addresses[name])
        except HostError:
            continue  # ``cut_off`` finds it silent
        with candidate:
            try:
                kept = relay_log.applied_since_start(source, name, candidate, apply_seconds)
            except HostError as exc:
                restarted[name] = f"{name}'s kept relay log cannot be applied: {exc}"
                continue
        if kept is not None:
            restarted[name] = (
                f"{name} was restarted at {kept.started} and its replication has not run"
                " since (replicas start with skip_slave_start, which keeps their relay log):"
                f" nothing shows it was replicating from {host} until {host} failed; its"
                f" kept relay log is applied ({kept.before or 'nothing'} -> {kept.after})"
            )
    views, alive = cut_off(connect, host, addresses, candidates)
    record = acknowledged.last(source, host, current)
    for name, view in views.items():
        if view.status is None or view.status.io_state != "No" or view.status.lost_source:
            restarted.pop(name, None)  # its I/O thread has run since (or it was reset)
        reasons = [
            restarted.get(name, view.refusal),
            acknowledged.refusal(host, name, record, view.received),
        ]
        if name in restarted and alive:
            reasons.append(f"{host} answers: start {name}'s replication instead")
        views[name] = replace(view, refusal="; ".join(r for r in reasons if r))
    return views, alive


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
    once the replica's replication was reset, the run killed inside that step included.
    (Before that, ``abort`` it and fail over again.) A split's emergency cut-back too."""
    if fence is None:
        raise InvalidTopology("no fence command is set (PINBOARD_FENCE_COMMAND)")
    if "split" in params:
        return split_emergency.plan_again(source, params, author=author, fence=fence, connect=connect)  # fmt: skip
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
    reset = set(params.get("reset", ()))
    document = current.document
    addresses = document["hosts"]
    mastered = [r for r in document["ranges"] if r["master"] == host]
    durability = of_master(document, host)  # the promoted replica keeps it
    # The promoted replica's fellows follow it; the old master is a replica of no one.
    others = sorted({n for r in mastered for n in replicas_of(r)} - {replica})
    ranges = []
    for entry in document["ranges"]:
        if entry["master"] == host:
            entry = with_replicas({**entry, "master": replica}, others)  # durability kept
        else:
            entry = with_replicas(entry, [n for n in replicas_of(entry) if n != host])
        ranges.append(entry)
    out = sorted({*document.get("out_of_service", []), host})
    new = documents.validate(
        documents.SHARDS, {**document, "ranges": ranges, "out_of_service": out}
    )

    def confirm() -> str:
        _, alive = cut_off(connect, host, addresses, replicas)
        note = (
            f"{host} {'answers' if alive else 'gives no answer'}, and no replica receives from it"
        )
        return f"{note}; ACCEPTED DATA LOSS: {loss}" if loss else note

    def fence_host() -> str:
        frozen = freeze(connect, host, addresses[host])
        fenced = fence(host, addresses[host])
        if not params.get("answers"):
            return f"{frozen}; {fenced}"
        return (
            f"{frozen} (the replicas received: {params['ranked']}); {fenced}. What {host}"
            f" holds past that no replica received, so no client saw it acknowledged: {host}"
            f" must be rebuilt (`rebuild {host}`), never pointed at {replica} as it is"
        )

    def apply_received() -> str:
        notes = []
        for name in replicas:
            if name in reset:
                notes.append(f"{name} replicates from no one: nothing to apply")
                continue
            with connect(addresses[name]) as r:
                r.stop_receiving()
                notes.append(f"{name} applied {r.apply_received(apply_seconds) or 'nothing'}")
        return "; ".join(notes)

    def stop_replication() -> str:
        with connect(addresses[replica]) as r:
            if r.replica_status() is None:  # reset already (a run that died in this step)
                return f"{replica} replicates from no one already"
            r.stop_replicating()
        return f"{replica} replicates from no one: it cannot follow {host} again"

    def replication_reset() -> bool:
        with connect(addresses[replica]) as r:
            return r.replica_status() is None

    def promote() -> str:
        # Idempotent: ``resume`` runs it again on a replica a dead run promoted in part.
        with connect(addresses[replica]) as r:
            if (status := r.replica_status()) is not None:
                raise HostError(f"{replica} replicates from {status.source}: it stays read-only")
            # Before its first write: a rebuilt replica's acknowledgements are awaited.
            r.arm_semi_sync(durability)
            r.set_read_only(False)
        return (
            f"{replica} writable, replicating from no one; semi-sync armed: its commits wait"
            " for the first replica that connects (`rebuild`)"
        )

    def follow() -> str:
        # Idempotent too. They applied all they received, which the candidate has as well.
        notes = []
        with connect(addresses[replica]) as r:
            for name in others:
                try:
                    with connect(addresses[name]) as other:
                        other.replicate_from(r, position="slave_pos")
                    notes.append(f"{name} replicates from {replica}")
                except HostError as exc:  # its replacement is the guard's, or a rebuild
                    notes.append(f"{name} does not follow {replica}: {exc}")
            if any(n.endswith(f"replicates from {replica}") for n in notes):
                r.set_semi_sync(True, durability)  # no more falling back: one acknowledges
        return "; ".join(notes) or f"{replica} has no other replica to follow it"

    shards = ", ".join(f"{r['range'][0]}..{r['range'][1]}" for r in mastered)
    return Plan(
        "failover",
        f"emergency failover of {host} to {replica} (shards {shards})"
        + ("; it answers, cut off from its replicas" if params.get("answers") else "")
        + (f"; accepted data loss: {loss}" if loss else ""),
        [
            Step(
                f"confirm no replica receives from {host}, which answers (cut off from them)"
                if params.get("answers")
                else f"confirm {host} is down, from the operator and every replica",
                (host,),
                confirm,
            ),
            Step(
                f"fence {host}: read_only and its client sessions ended if it answers,"
                " then the fence command",
                (host,),
                fence_host,
            ),
            Step(
                f"stop receiving from {host}; apply all that was received ({params['ranked']})",
                tuple(replicas),
                apply_received,
            ),
            # Its replication reset, the replica cannot follow the old master again: the
            # failover stands from here, and a run that died is resumed, not aborted. The
            # reset is all this step does, so that when it is in force (a run killed in it,
            # before the journal had it) nothing of it is left to do: ``resume`` does not
            # run it again, and runs the promotion after it.
            Step(
                f"stop replication on {replica}: it cannot follow {host} again",
                (replica,),
                stop_replication,
                commits=True,
                took_effect=replication_reset,
            ),
            Step(f"arm semi-sync on {replica} and clear its read_only", (replica,), promote),
            Step(
                f"make {', '.join(others) or 'its other replicas'} replicate from {replica} (GTID)",
                (replica, *others),
                follow,
            ),
            publish_step(
                source,
                current,
                new,
                author=author,
                reason=f"emergency failover of {host} to {replica}",
                change=f"shards {shards} mastered by {replica}; {host} out of service",
                hosts=(host, replica),
                commits=True,  # past the commit point already: says whether it is in force
            ),
        ],
        params,
    )
