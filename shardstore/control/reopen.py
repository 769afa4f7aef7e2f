"""Reopen a master that restarted (``plan_reopen``: ``shardstore reopen HOST``).

Every shard host starts ``read_only``: a crashed master that comes back takes no write
meant for the host that replaced it. A master that restarts while the map still names it
stays read-only until an operator reopens it: one whose replica follows it could be failed
over instead, but one with no replica (both halves of a split until their replicas are
rebuilt, a promoted master before its rebuild) has no other copy to fail over to. A
restart also loses what was set in memory only: the GTID domain a split's new master
writes in (MariaDB has no ``SET PERSIST``), and its semi-sync. The map records the domain
(``domains``), so this command sets it again before the first write. Steps:

1. check, under the host's lock and on the map in force: the map names the host master of
   some range; it replicates from no one (a split's reverse stream aside, the role the
   old host of a split keeps); it is read-only. Before the plan is made, every other host
   of the map is asked too: none may hold the host's shards writable (``read_only`` off
   and the site's writes not taken away by a split's fence, ``grant_fence``). A host that
   gives no answer cannot be asked: the plan says so, and the operator confirms;
2. set the host's GTID domain to the one the map records, and end the client sessions
   opened before (a session keeps the domain it opened with); with none recorded the
   host writes in its server's own;
3. semi-sync: kept (no fallback) if the replica the map names follows the host, else armed
   as for a master with no replica (``arm_semi_sync``: it commits alone while no replica
   is connected, and waits for the first that connects: a split's reverse stream, or the
   replica rebuilt later);
4. clear ``read_only``.

Every step can run again; a run left open (its process died) is closed with
``abort OP --close`` once the host is seen as the steps left it, and run again.
A run open on the host (``operations``) holds its lock: this plan is refused meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..durability import of_master
from ..exceptions import InvalidTopology
from ..replicas import replicas_of
from ..topology import database_name
from . import documents, reverse_stream
from .config_source import ConfigSource
from .grant_fence import fenced
from .mysql_hosts import HostError, MySQLHost, endpoint
from .plans import Plan, Step

Connect = Callable[[str], MySQLHost]


def plan_reopen(source: ConfigSource, *, host: str, author: str, connect: Connect = MySQLHost) -> Plan:  # fmt: skip
    """The plan to make ``host``, a master that restarted, writable again in its GTID
    domain; ``InvalidTopology`` or ``HostError`` with the reason when it may not be."""
    document = source.current(documents.SHARDS).document
    ranges = mastered(document, host)
    address = document["hosts"][host]
    domain = document.get("domains", {}).get(host)
    replicas = sorted({name for r in ranges for name in replicas_of(r)})
    durability = of_master(document, host)
    with connect(address) as server:
        streams = check_host(server, host)
    silent = _others_writable(document, host, connect)
    spans = ", ".join(f"{r['range'][0]}..{r['range'][1]}" for r in ranges)
    where = f"GTID domain {domain}" if domain is not None else "its server's GTID domain"
    summary = f"reopen {host}: master of shards {spans}, writable in {where}"
    if silent:
        summary += f"; not asked (no answer): {', '.join(silent)}"

    def check() -> str:
        now = source.current(documents.SHARDS).document
        mastered(now, host)
        if now.get("domains", {}).get(host) != domain:
            raise HostError(f"{host}'s GTID domain in the map changed since the plan: plan again")
        with connect(address) as server:
            found = check_host(server, host)
        return f"{host} is read-only and replicates from no one" + (
            f" (its reverse streams: {', '.join(found)})" if found else ""
        )

    def set_domain() -> str:
        if domain is None:
            return f"the map records no GTID domain for {host}: it writes in its server's own"
        with connect(address) as server:
            if int(server.value("SELECT @@global.gtid_domain_id")) == domain:
                return f"{host} writes in GTID domain {domain} already"
            server.query(f"SET GLOBAL gtid_domain_id = {int(domain)}")
            ended = server.kill_client_sessions()
        return f"{host} writes in GTID domain {domain}; {ended} sessions opened before ended"

    def semi_sync() -> str:
        following = [r for r in replicas if _follows(connect, document, r, address)]
        with connect(address) as server:
            if following:
                server.set_semi_sync(True, durability)
                return f"{host}'s commits wait for an acknowledgement of {', '.join(following)} (no fallback)"  # fmt: skip
            server.arm_semi_sync(durability)
        return f"{host}'s semi-sync armed: it commits alone until a replica connects, then waits for it"  # fmt: skip

    def open_host() -> str:
        with connect(address) as server:
            server.set_read_only(False)
        return f"{host} writable"

    hosts = (host, *replicas)
    kept = f" (its reverse streams {', '.join(streams)} kept)" if streams else ""
    arm = f"arm {host}'s semi-sync" + (f" (kept if {' or '.join(replicas)} follows it)" if replicas else "")  # fmt: skip
    return Plan(
        "reopen",
        summary,
        [
            Step(
                f"check {host}: master in the map, read-only, replicates from no one{kept}",
                hosts,
                check,
            ),
            Step(f"set {host}'s GTID domain ({where})", (host,), set_domain),
            Step(arm, hosts, semi_sync),
            Step(f"clear read_only on {host}", (host,), open_host),
        ],
        {"host": host, "domain": domain, "unasked": silent},
    )


def mastered(document: dict[str, Any], host: str) -> list[dict[str, Any]]:
    """The ranges the map names ``host`` master of; InvalidTopology if none."""
    if host not in document["hosts"]:
        raise InvalidTopology(f"no host {host} in the shard map")
    if not str(document["hosts"][host]).startswith("mysql://"):
        raise InvalidTopology(f"{host} is no MySQL host: nothing to reopen")
    ranges = [r for r in document["ranges"] if r["master"] == host]
    if not ranges:
        raise InvalidTopology(f"the shard map names {host} master of no range: nothing to reopen")
    return ranges


def check_host(server: MySQLHost, host: str) -> list[str]:
    """Raise HostError unless ``server`` is read-only and replicates from no one but by
    split reverse streams; the names of those."""
    status = server.replica_status()
    if status is not None:
        raise HostError(f"{host} replicates from {status.source}: a replica is not reopened (fail over to it, or rebuild it)")  # fmt: skip
    names = [str(r.get("Connection_name") or "") for r in server.query("SHOW ALL SLAVES STATUS")]
    others = [n for n in names if n and not reverse_stream.is_reverse(n)]
    if others:
        raise HostError(f"{host} replicates from others by {', '.join(others)}: not a master on its own")  # fmt: skip
    if not server.read_only():
        domain = server.value("SELECT @@global.gtid_domain_id")
        raise HostError(f"{host} is writable already (GTID domain {domain}): nothing to reopen")
    return [n for n in names if n]


def _follows(connect: Connect, document: dict[str, Any], replica: str, address: str) -> bool:
    try:
        with connect(document["hosts"][replica]) as r:
            status = r.replica_status()
    except HostError:
        return False  # a dead replica acknowledges nothing
    source = "{}:{}".format(*endpoint(address))
    return status is not None and status.source == source and status.io_state == "Yes"


def _others_writable(document: dict[str, Any], host: str, connect: Connect) -> list[str]:
    """Raise HostError if another host of the map takes the site's writes on a shard of
    ``host``'s; the hosts that could not be asked (out-of-service ones left out)."""
    databases = [database_name(s) for r in mastered(document, host) for s in range(r["range"][0], r["range"][1] + 1)]  # fmt: skip
    out = set(document.get("out_of_service", []))
    others = [n for n, a in document["hosts"].items() if n != host and str(a).startswith("mysql://")]  # fmt: skip

    def writable(name: str) -> list[str] | None:
        try:
            with connect(document["hosts"][name]) as other:
                if other.read_only():
                    return []
                held = sorted(set(databases) & other.databases())
                return sorted(set(held) - set(fenced(other, held)))
        except HostError:
            return None

    if not others:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(others))) as pool:
        found = dict(zip(others, pool.map(writable, others), strict=True))
    for name, held in found.items():
        if held:
            raise HostError(
                f"{name} takes the site's writes on {len(held)} of {host}'s shards ({held[0]}, ...):"
                f" two writable copies; make it read-only or fence them first"
            )
    return sorted(n for n, held in found.items() if held is None and n not in out)
