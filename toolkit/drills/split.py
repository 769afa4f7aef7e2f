"""The split drill: ``shardstore split HOST`` under load, then ``split --revert`` and
``cleanup``.

The host is the first master (by name) with a healthy replica in service; the split
hands the second half of its shards to that replica. The load's pinners are grouped
three ways: the host's shards that move, those that stay, and the other master's. The
drill checks the issue's bounds:

* the split's diff of the moving shards is clean (its own step: rows and checksums);
* the moving shards' read-only window, seen by their pinners as the longest stretch with
  no acknowledged write until the revert begins, is at most 2 s; the shards that stay
  and the other master's see no error at all, split and revert alike;
* no acknowledged write is lost (read back on the map in force after the revert);
* no write lands on a host that no longer owns the shard: none of the comments
  acknowledged after the split is in the copies each host set aside (``*_splitN``);
* ``split --revert N`` restores the old ranges, and with them the data: every comment
  written on the replica meanwhile is on the host again (the same read-back).

Then ``cleanup N`` drops the set-aside copies. The revert leaves the replica out of
service (it has taken writes of its own, so it cannot follow the host again without a
rebuild, ``shardstore rebuild``, which this drill does not run): a split drill uses up one
master/replica pair of the cluster.
"""

from __future__ import annotations

import re
import time
from itertools import pairwise
from typing import Any

from shardstore import Topology, decompose, shard_of
from shardstore.control.split import halves, shards_in, spans
from shardstore.topology import database_name
from toolkit.load.pinners import Pinner, ensure_pinners
from toolkit.load.report import longest_gap
from toolkit.load.traffic import Load

from .base import SETTLE, WARM_UP, Drills, Result, healthy_pair

#: The bound of issue 10 on the moving shards' read-only window, in seconds.
WINDOW = 2.0
PER_GROUP = 3
#: The load runs through the split, the revert and their diffs and copies of half a host's
#: shards (minutes each on the local cluster), but no longer than this.
SPLIT_CAP = 3600.0
FOLLOWED = re.compile(r"\d+ processes follow shard map v\d+.*")
_DIFF = re.compile(r"diff \S+ \S+, shards \S+.*?: .*?(?:identical|tables differ)")
#: A step as the command starts it: ``[4/8] wait until ... (at +190.31s)``.
_STEP = re.compile(r"^\[(\d+)/\d+\] (.*) \(at \+([\d.]+)s\)$", re.MULTILINE)


def steps_window(output: str) -> str:
    """The read-only window as the command ran it: from the step that publishes it to the
    step after the one that publishes the new ranges, each step with its share."""
    starts = [(int(n), name, float(at)) for n, name, at in _STEP.findall(output)]
    first = next((i for i, (_, name, _) in enumerate(starts) if "read-only" in name), None)
    if first is None or first + 4 >= len(starts):
        return "(steps not found in its output)"
    window = starts[first : first + 5]
    shares = ", ".join(f"step {n}: {b - a:.2f}" for (n, _, a), (_, _, b) in pairwise(window))
    return f"{window[-1][2] - window[0][2]:.2f} s ({shares})"


def split(d: Drills, result: Result) -> None:
    topology = d.topology()
    host, replica = healthy_pair(d, topology)
    ranges = [r.as_json() for r in topology.ranges if r.master == host]
    staying, moving = halves(ranges)
    movers = set(shards_in(moving))
    result.title = f"split {host} onto {replica} under load, then revert and clean up"
    result.figure(f"shards {spans(moving)} move to {replica}, {spans(staying)} stay on {host}")
    moving_group, staying_group = f"{host} (moving)", f"{host} (staying)"

    def group(pinner: Pinner) -> str:
        shard = shard_of(pinner.user_id)
        if shard in movers:
            return moving_group
        master = topology.master_of(shard)
        return staying_group if master == host else master

    others = sorted({r.master for r in topology.ranges} - {host})
    pinners = ensure_pinners(
        d.site,
        d.dir / "pinners.json",
        topology,
        per_group=PER_GROUP,
        group=group,
        groups=[moving_group, staying_group, *others],
    )
    load = d.track(Load(d.site, pinners, topology, group=group, max_seconds=SPLIT_CAP)).start()
    load.wait(WARM_UP)

    d.say(f"manage.py shardstore split {host}")
    ran = d.manage("shardstore", "split", host, timeout=1800)
    split_done = time.monotonic()
    result.figure(f"split: exit {ran.returncode} in {ran.seconds:.1f} s")
    diff = _DIFF.search(ran.output)
    result.figure(f"split's own read-only window: {steps_window(ran.output)}")
    followed = FOLLOWED.search(ran.output)
    result.figure(f"its wait for every process: {followed[0] if followed else '(not found)'}")
    result.figure(f"split's diff: {diff[0] if diff else '(not found in its output)'}")
    if not result.bound("split succeeded", ran.returncode == 0, f"exit {ran.returncode}"):
        result.figures += [f"| {line}" for line in ran.tail().splitlines()]
        return
    result.bound("diff of the moving shards clean", bool(diff and "identical" in diff[0]), "see above")  # fmt: skip
    after = d.topology()
    number = after.version
    result.bound(
        f"map v{number}: shards {spans(moving)} mastered by {replica}",
        all(after.master_of(s) == replica for s in (min(movers), max(movers)))
        and all(after.master_of(s) == host for s in shards_in(staying)[:1]),
        ", ".join(f"{r.first}..{r.last}: {r.master}" for r in after.ranges),
    )
    load.wait(SETTLE)
    stray = strays(d, after, load, host, replica, movers, split_done, number)
    what = "acknowledged writes after the split found on the host that gave the shard up"
    result.bound(what, stray == 0, stray)

    d.say(f"manage.py shardstore split --revert {number}")
    revert_began = time.monotonic()
    reverted = d.manage("shardstore", "split", "--revert", str(number), timeout=1800)
    result.figure(f"revert: exit {reverted.returncode} in {reverted.seconds:.1f} s")
    load.wait(SETTLE)
    report = d.finish(result, load)

    gap, began = longest_gap(load.times(moving_group), load.started, revert_began)
    result.bound(
        f"read-only window of the moving shards at most {WINDOW:g} s",
        gap <= WINDOW,
        f"{gap:.2f} s (from +{began - load.started:.1f} s; the revert's own window:"
        f" {report.groups[moving_group].longest_gap:.2f} s)",
    )
    result.bound(
        "errors on the shards that stay and on the other master's",
        report.errors(staying_group, *others) == 0,
        report.errors(staying_group, *others),
    )
    if not result.bound("revert succeeded", reverted.returncode == 0, f"exit {reverted.returncode}"):  # fmt: skip
        result.figures += [f"| {line}" for line in reverted.tail().splitlines()]
        return
    restored = d.topology()
    result.bound(
        f"map v{restored.version}: the old ranges again",
        _spans(restored, host) == _spans(topology, host),
        ", ".join(f"{r.first}..{r.last}: {r.master}" for r in restored.ranges),
    )
    cleaned = d.manage("shardstore", "cleanup", str(number), timeout=1800)
    result.figure(f"cleanup {number}: exit {cleaned.returncode} in {cleaned.seconds:.1f} s")
    result.bound("cleanup succeeded", cleaned.returncode == 0, f"exit {cleaned.returncode}")
    result.notes.append(
        f"{replica} is out of service after the revert until `shardstore rebuild {replica}`"
        f" makes it {host}'s replica again"
    )


def _spans(topology: Topology, host: str) -> list[tuple[int, int]]:
    """The shards ``host`` masters, as merged runs."""
    runs: list[list[int]] = []
    for r in sorted(topology.ranges, key=lambda r: r.first):
        if r.master != host:
            continue
        if runs and runs[-1][1] == r.first - 1:
            runs[-1][1] = r.last
        else:
            runs.append([r.first, r.last])
    return [(a, b) for a, b in runs]


def strays(
    d: Drills,
    topology: Topology,
    load: Load,
    host: str,
    replica: str,
    movers: set[int],
    since: float,
    number: int,
) -> int:
    """Comments acknowledged after the split that sit in a copy the split set aside (on
    the host for the moving shards, on the replica for the others): writes that landed on
    a host no longer owning the shard."""
    wanted: dict[tuple[str, int], list[int]] = {}
    for ack in load.acks_after(since):
        if topology.master_of(ack.shard) not in (host, replica):
            continue
        gave_up = host if ack.shard in movers else replica
        wanted.setdefault((gave_up, ack.shard), []).append(decompose(ack.comment_id).local_id)
    found = 0
    for (name, shard), local_ids in wanted.items():
        with d.admin(topology, name) as server:
            rows: list[dict[str, Any]] = server.query(
                f"SELECT COUNT(*) AS n FROM `{database_name(shard)}_split{number}`.comments"
                f" WHERE local_id IN ({', '.join(map(str, local_ids))})"
            )
        found += int(rows[0]["n"])
    return found
