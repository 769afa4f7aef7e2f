"""Change a range's durability policy (``shardstore durability FIRST-LAST POLICY``).

What the policies mean is in ``shardstore/durability.py``. MariaDB holds the policy per
server, so it is its master's: every range of that master takes it. Steps:

1. check, under the master's lock, on the map the plan was made from: the master still
   masters the range, and answers;
2. set the master's ``rpl_semi_sync_master_timeout`` (commits already waiting keep the
   wait they began with);
3. publish the shard map with the new policy on the master's ranges: the record that
   failover, split, rebuild and reopen apply to whichever host masters them next.

Refused: a range that is not one of the map's, a policy that is not one, the policy in
force already (in the map and on the master: a master that lost it, restarted say, is
given it again, with nothing published), and ``strict`` on a range with no replica (it
could take no write once its master waited for one). Abort puts the old timeout and map
back; resume runs again.
"""

from __future__ import annotations

from typing import Any

from ..durability import KEY, Durability, of_master
from ..exceptions import InvalidTopology
from ..replicas import replicas_of
from . import documents
from .config_source import ConfigSource, Revision
from .failover import Connect
from .plans import Plan, Step
from .publish import publish_step


def plan_durability(
    source: ConfigSource,
    *,
    shards: tuple[int, int],
    policy: str,
    author: str,
    connect: Connect,
    base: Revision | None = None,
) -> Plan:
    """The plan to give the range ``shards`` (its first and last shard) the durability
    ``policy`` (``strict`` or ``degrade-after N``); InvalidTopology with the reason when
    it may not have it."""
    current = base or source.current(documents.SHARDS)
    document = current.document
    entry = _range(document, shards)
    master, wanted = str(entry["master"]), Durability.parse(policy)
    was, address = of_master(document, master), document["hosts"][master]
    if not str(address).startswith("mysql://"):
        raise InvalidTopology(f"{master} is no MySQL host: its commits wait for no replica")
    ranges = [r for r in document["ranges"] if r["master"] == master]
    if wanted.strict and any(not replicas_of(r) for r in ranges):
        raise InvalidTopology(
            f"range {_span(shards)} has no replica: strict, its master could take no write"
            " once it waited for one (rebuild a replica first, or degrade-after N)"
        )
    with connect(address) as m:
        applied = int(m.value("SELECT @@global.rpl_semi_sync_master_timeout"))
    if wanted == was and applied == wanted.timeout_ms:
        raise InvalidTopology(f"range {_span(shards)} is {was} already")
    changed = [_with(r, wanted) if r["master"] == master else r for r in document["ranges"]]
    new = documents.validate(documents.SHARDS, {**document, "ranges": changed})

    def check() -> str:
        if of_master(source.current(documents.SHARDS).document, master) != was:
            raise InvalidTopology(f"{master}'s durability changed since the plan: plan again")
        with connect(address) as m:
            timeout = m.value("SELECT @@global.rpl_semi_sync_master_timeout")
        return f"{master} answers; its commits wait {timeout} ms for an acknowledgement"

    def set_timeout(timeout_ms: int) -> str:
        with connect(address) as m:
            m.query(f"SET GLOBAL rpl_semi_sync_master_timeout = {timeout_ms}")
        return f"{master}'s commits wait {timeout_ms} ms for an acknowledgement"

    spans = ", ".join(_span(r["range"]) for r in ranges)
    summary = f"durability of {spans} (master {master}): {was} -> {wanted}"
    steps = [
        Step(f"check {master}: master of {spans}, answers", (master,), check),
        Step(
            f"set {master}'s semi-sync timeout ({wanted})",
            (master,),
            lambda: set_timeout(wanted.timeout_ms),
            undo=lambda: set_timeout(applied),
        ),
    ]
    if wanted != was:
        change = f"{spans}: {wanted}"
        steps.append(publish_step(source, current, new, author=author, reason=summary, change=change, hosts=(master,)))  # fmt: skip
    params = {"shards": list(shards), "policy": str(wanted), "master": master, "base": current.version}  # fmt: skip
    return Plan("durability", summary, steps, params)


def _range(document: dict[str, Any], shards: tuple[int, int]) -> dict[str, Any]:
    for entry in document["ranges"]:
        if tuple(entry["range"]) == tuple(shards):
            return dict(entry)
    known = ", ".join(_span(r["range"]) for r in document["ranges"])
    raise InvalidTopology(f"no range {_span(shards)} in the shard map (its ranges: {known})")


def _with(entry: dict[str, Any], durability: Durability) -> dict[str, Any]:
    kept = {k: v for k, v in entry.items() if k != KEY}
    return {**kept, **durability.entry()}


def _span(shards: Any) -> str:
    return f"{shards[0]}-{shards[1]}"
