"""A split with a web process that missed it (d): one gunicorn, on a test host of its own,
cut off from ZooKeeper just before ``shardstore split``. It keeps its last map; the
split must not count on it following the new one. Its writes to the moving shards fail
(503 with ``Retry-After``: the old host's grant fence, then its own lease) and none lands
on the host that gave the shards up."""

from __future__ import annotations

import time

from shardstore import shard_of
from shardstore.control.split import halves, shards_in, spans
from toolkit.drills.base import WARM_UP, Result, healthy_pair
from toolkit.drills.split import FOLLOWED
from toolkit.load.api import Site
from toolkit.load.pinners import Pinner, ensure_pinners
from toolkit.load.traffic import Load
from toolkit.processes import free_port
from toolkit.site_processes import GunicornSite

from .base import Nemesis
from .network import Namespace

#: The cut-off web's pinners are this many, all on shards that move.
PER_GROUP = 3
#: Long enough for the cut-off web's lease to run out after the split (config_source).
AFTER = 12.0


def web_cut_off(n: Nemesis, result: Result) -> None:
    """d. One gunicorn cut off from ZooKeeper during a split."""
    topology = n.topology()
    host, replica = healthy_pair(n, topology)
    ranges = [r.as_json() for r in topology.ranges if r.master == host]
    staying, moving = halves(ranges)
    movers = set(shards_in(moving))
    result.title = f"split {host} onto {replica} with one web process cut off from ZooKeeper"
    result.figure(f"shards {spans(moving)} move to {replica}, {spans(staying)} stay on {host}")

    port = free_port()
    ports = [r["port"] for r in n.cluster.state["processes"].values() if r["port"]]
    lost_web = Namespace("web").create(inside=ports, outside=[port])
    n.namespaces.append(lost_web)
    web = GunicornSite(n.env, n.dir / "web-cut-off.log", workers=1, threads=4, port=port, app="toolkit.site_wsgi")  # fmt: skip
    lost_web.run_in(web)
    web.start().wait_ready()
    try:
        _split_with(n, result, web, lost_web, host, movers)
    finally:
        web.stop()


def _split_with(
    n: Nemesis, result: Result, web: GunicornSite, lost_web: Namespace, host: str, movers: set[int]
) -> None:
    topology = n.topology()
    moving, elsewhere = "moving (the cut-off web)", "elsewhere (the cluster's web)"

    def group(pinner: Pinner) -> str:
        return moving if shard_of(pinner.user_id) in movers else elsewhere

    pinners = ensure_pinners(
        n.site,
        n.dir / "pinners.json",
        topology,
        per_group=PER_GROUP,
        group=group,
        groups=[moving, elsewhere],
    )
    site = Site(web.url("/"))
    cut_off = n.track(Load(site, [p for p in pinners if group(p) == moving], topology, group=group))
    rest = n.track(Load(n.site, [p for p in pinners if group(p) != moving], topology, group=group))
    cut_off.start(), rest.start()
    cut_off.wait(WARM_UP)

    lost_web.cut([n.cluster.port("zookeeper")], "the web process loses ZooKeeper")
    n.say(f"{lost_web.cuts[-1]}; manage.py shardstore split {host}")
    ran = n.manage("shardstore", "split", host, timeout=600)
    split_done = time.monotonic()
    result.figure(
        f"split: exit {ran.returncode} in {ran.seconds:.1f} s, begun as the web was cut off"
    )
    followed = FOLLOWED.search(ran.output)
    result.figure(f"its wait for every process: {followed[0] if followed else '(not found)'}")
    if not result.bound("split succeeded", ran.returncode == 0, f"exit {ran.returncode}"):
        result.figures += [f"| {line}" for line in ran.tail().splitlines()]
        return
    cut_off.wait(AFTER)
    rest_report = n.finish(result, rest)
    report = n.finish(result, cut_off)
    site.close()
    tally = report.groups[moving].tally
    late = cut_off.acked_since(split_done, moving)
    result.bound(
        "the cut-off web's writes to the moving shards refused after the split (503, Retry-After)",
        tally.refused > 0 and late == 0 and tally.failed == 0,
        f"{tally.refused} refused, {late} acknowledged after the split, {tally.failed} failed",
    )
    result.bound("errors through the cluster's web", rest_report.errors(elsewhere) == 0, rest_report.errors(elsewhere))  # fmt: skip
