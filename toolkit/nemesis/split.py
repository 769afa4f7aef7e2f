"""A split with a web process that missed it (d): one gunicorn, on a test host of its own,
cut off from ZooKeeper just before ``shardstore split``. It keeps its last map; the
split must not count on it following the new one. Its writes to the moving shards fail
(503 with ``Retry-After``: the old host's grant fence, which is all that stops them now that
a cut-off process writes MySQL on by its last map) and none lands on the host that gave
the shards up.

Then the same web, healed and on the split's map, is cut off again past its lease while
the split is reverted: it still reads the moved shards on the split's new master, whose
copies are no longer fed. With memcached emptied (as evictions would), each of its answers
must be a 503, never the older value, and it must leave nothing older in memcached
(``grant_fence.take_reads``; a cut-off process fills no cache). The revert itself is
stopped there past its ZooKeeper session: continued, it takes no step without its locks,
and ``resume`` finishes it."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from typing import Any

from shardstore import shard_of
from shardstore.control.split import halves, shards_in, spans
from toolkit.drills.base import WARM_UP, DrillError, Result, healthy_pair
from toolkit.drills.caches import flush_memcached
from toolkit.drills.split import FOLLOWED
from toolkit.load.api import Site
from toolkit.load.pinners import Pinner, ensure_pinners
from toolkit.load.traffic import Load
from toolkit.processes import free_port
from toolkit.site_processes import GunicornSite

from .base import Nemesis, Paused
from .network import Namespace
from .operator import PLAN_STEP, left_open

#: How a run that lost its locks stops (plans.run, locks.LockLost).
LOCK_LOST = re.compile(
    r"step \d+ \([^)]*\) failed: lock \S+ (?:was lost with its ZooKeeper session|cannot be checked)"
)

#: The cut-off web's pinners are this many, all on shards that move.
PER_GROUP = 3
#: How long the cut-off web keeps writing by its old map after the split, past its lease
#: (config_source): the grant fence refuses every such write, however long it goes on.
AFTER = 12.0
#: How long the cut-off web is read after the revert (each answer a 503 or the newest text).
READS_AFTER = 5.0


def web_cut_off(n: Nemesis, result: Result) -> None:
    """d. One gunicorn cut off from ZooKeeper during a split, and again during its revert."""
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
    tally = cut_off.stop().groups[moving].tally
    late = cut_off.acked_since(split_done, moving)
    result.bound(
        "the cut-off web's writes to the moving shards refused after the split (503, Retry-After)",
        tally.refused > 0 and late == 0 and tally.failed == 0,
        f"{tally.refused} refused, {late} acknowledged after the split, {tally.failed} failed",
    )
    movers_pinners = [p for p in pinners if group(p) == moving]
    _revert_read_through(n, result, web, lost_web, site, movers_pinners)
    rest_report = n.finish(result, rest)
    n.finish(result, cut_off)
    site.close()
    result.bound("errors through the cluster's web", rest_report.errors(elsewhere) == 0, rest_report.errors(elsewhere))  # fmt: skip


def _revert_read_through(
    n: Nemesis, result: Result, web: GunicornSite, lost_web: Namespace, site: Site, pinners: list[Pinner]
) -> None:  # fmt: skip
    """The web healed, on the split's map, caches what it reads of the moved pinners; cut
    off again past its lease, the split is reverted and each pinner's about text rewritten
    through the cluster's web. The cut-off web, still on the split's map, must never serve
    the older text (the new master's copies are no longer fed) nor leave it in memcached."""
    split = n.source.current("shards").version
    lost_web.heal()
    followed = _web_serves(web, lambda s: s["config"].get("shards") == split and not s["source"]["cut_off"])  # fmt: skip
    result.figure(f"the web healed: on the split's map v{split} in {followed:.1f} s")
    _rewrite(n, pinners, "before the revert")
    for pinner in pinners:  # read (and cached) on the split's map: the new master's copies
        site.call("GET", f"/users/{pinner.user_id}")
    lost_web.cut([n.cluster.port("zookeeper")], "the web process loses ZooKeeper again")
    past = _web_serves(web, lambda s: s["source"]["cut_off"])
    command = ["shardstore", "split", "--revert", str(split)]
    plan = PLAN_STEP.findall(n.manage(*command, "--dry-run").output)
    reads = next((int(k) for k, name in plan if name.startswith("take the site's reads")), 0)
    if not reads:
        raise DrillError(f"the revert's plan takes no reads away: {plan}")
    # Stopped once it took the reads away, before it renames the new master's copies: a
    # revert run that far and no farther (stalled there, its operator away) leaves them as
    # is. It stays stopped past its ZooKeeper session, so its locks go: continued, it must
    # not take its last step without them, and `resume` must finish it.
    revert = Paused(n, reads, *command)
    try:
        if not revert.wait():
            raise DrillError(f"the revert did not stop after step {reads}: {revert.finish().tail(5)}")  # fmt: skip
        served, newest = _read_through(n, site, pinners)
        operation = left_open(n, f"the revert stopped after step {reads}")
    finally:
        stalled = revert.finish()
    lost = LOCK_LOST.search(stalled.output)
    if not result.bound(f"the revert of split {split}, stalled past its ZooKeeper session, takes no step after it", stalled.returncode != 0 and lost is not None, lost[0] if lost else f"exit {stalled.returncode}"):  # fmt: skip
        result.figures += [f"| {line}" for line in stalled.tail().splitlines()]
        return
    ran = n.manage("shardstore", "resume", str(operation["id"]))
    if not result.bound(f"its resume, the web cut off {past:.1f} s past its lease", ran.returncode == 0, f"exit {ran.returncode} in {ran.seconds:.1f} s"):  # fmt: skip
        result.figures += [f"| {line}" for line in ran.tail().splitlines()]
        return
    result.bound(f"the cut-off web serves no stale profile once the revert took its reads (step {reads})", served["stale"] == 0 and served["503"] > 0, dict(served))  # fmt: skip
    through = [n.site.call("GET", f"/users/{p.user_id}") for p in pinners]
    cached = [r.json().get("about") if r.status == 200 else r.status for r in through]
    result.bound("the cluster's web reads the newest text (memcached holds nothing stale)", cached == [newest] * len(pinners), cached)  # fmt: skip


def _read_through(n: Nemesis, site: Site, pinners: list[Pinner]) -> tuple[Counter[str], str]:
    """Each pinner's about text rewritten through the cluster's web, then read through the
    cut-off web for a while, the caches emptied before each round: what it answered, and
    the newest text."""
    newest = _rewrite(n, pinners, "in the revert")
    served: Counter[str] = Counter()
    deadline = time.monotonic() + READS_AFTER
    while time.monotonic() < deadline:
        # Emptied before each round, as evictions would: the write, and the worker's tasks
        # after it, read the newest value back into memcached, and a hit tests nothing.
        flush_memcached(n.cluster)
        for pinner in pinners:
            reply = site.call("GET", f"/users/{pinner.user_id}")
            about = reply.json().get("about") if reply.status == 200 else None
            served["newest" if about == newest else "stale" if reply.status == 200 else str(reply.status)] += 1  # fmt: skip
        time.sleep(0.1)
    return served, newest


def _rewrite(n: Nemesis, pinners: list[Pinner], when: str) -> str:
    """Every pinner's about text set to a new value through the cluster's web; the value."""
    about = f"written {when} {time.monotonic():.3f}"
    statuses = [
        n.site.call("PATCH", "/me", {"about": about}, token=p.token).status for p in pinners
    ]
    if any(status != 200 for status in statuses):
        raise DrillError(f"the about text not written {when} through the cluster's web: {statuses}")
    return about


def _web_serves(
    web: GunicornSite, wanted: Callable[[dict[str, Any]], bool], timeout: float = 60
) -> float:
    """Seconds until the web's ``/readyz`` report satisfies ``wanted`` (DrillError past ``timeout``)."""
    began = time.monotonic()
    request = urllib.request.Request(web.url("/readyz"), headers={"X-Forwarded-Proto": "https"})
    while True:
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:
                report = json.loads(reply.read())
        except urllib.error.HTTPError as error:  # not ready is a 503 with the same report
            report = json.loads(error.read())
        if report.get("source") and wanted(report):
            return time.monotonic() - began
        if time.monotonic() - began > timeout:
            raise DrillError(f"the cut-off web's /readyz never showed what was awaited: {report}")
        time.sleep(0.2)
