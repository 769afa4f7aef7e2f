"""The split drill: ``shardstore split HOST`` under load, on shards of a size, then
``split --revert``, ``cleanup``, ``rebuild`` of the replica, and the split again.

The host is the first master (by name) with a healthy replica in service; the split
hands the second half of its shards to that replica. First ``PINS`` pins are bulk-loaded
into the host's shards, moving and staying alike (``bulk``), so the windows below are
measured on shards that hold data. The load's pinners are grouped three ways: the host's
shards that move, those that stay, and the other master's. The drill checks the issue's
bounds:

* the split's diff of the moving shards is clean (its own step: rows and checksums), and
  its time is reported;
* the moving shards' read-only window, seen by their pinners as the longest stretch with
  no acknowledged write, is at most 2 s in the split and at most 2 s in the revert; the
  shards that stay and the other master's see no error at all, split and revert alike;
* no acknowledged write is lost (read back on the map in force after the revert);
* no write lands on a host that no longer owns the shard: none of the comments
  acknowledged after the split is in the replica's set-aside copies (``*_splitN``), and
  the host's copies of the moved shards hold each such comment exactly as the new master
  does (the reverse stream wrote them, nothing else);
* ``split --revert N`` is a cut-back over the split's reverse stream: the old ranges, and
  with them the data: every comment written on the replica meanwhile is on the host again
  (the same read-back).

Then ``cleanup N`` removes the stream and drops the copies: refused first, as no backup of
the range now holding the moved shards was taken since the split, then run once one is. The revert leaves the replica
out of service (it has taken writes of its own, so it cannot follow the host again without
a rebuild): ``shardstore rebuild`` makes it the host's replica again, and the host is split
onto it once more under a second load, with the same bounds on that split: its diff clean,
its read-only window at most 2 s; and that second split is reverted too, its window at
most 2 s, nothing acknowledged lost. A split drill uses up one master/replica pair of the
cluster.
"""

from __future__ import annotations

import re
import time
from itertools import pairwise

from shardstore import Topology, decompose, shard_of
from shardstore.control import reverse_stream
from shardstore.control.split import halves, shards_in, spans
from shardstore.topology import database_name
from toolkit.load.pinners import Pinner, ensure_pinners
from toolkit.load.report import longest_gap
from toolkit.load.traffic import Load

from .backups import backed_up, store_url
from .base import SETTLE, WARM_UP, Drills, Ran, Result, healthy_pair
from .bulk import load_pins
from .rebuild import REBUILD_CAP

#: The bound of issues 10 and 26 on the moving shards' read-only windows, in seconds.
WINDOW = 2.0
#: Pins bulk-loaded into the host's shards before the split (issue 26: at least 200,000).
PINS = 200_000
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
    final = next(
        (i for i, (_, name, _) in enumerate(starts) if first is not None and i > first and name.startswith("publish shard map")),
        None,
    )  # fmt: skip
    if first is None or final is None or final + 1 >= len(starts):
        return "(steps not found in its output)"
    window = starts[first : final + 2]
    shares = ", ".join(f"step {n}: {b - a:.2f}" for (n, _, a), (_, _, b) in pairwise(window))
    return f"{window[-1][2] - window[0][2]:.2f} s ({shares})"


def split(d: Drills, result: Result) -> None:
    topology = d.topology()
    host, replica = healthy_pair(d, topology)
    ranges = [r.as_json() for r in topology.ranges if r.master == host]
    staying, moving = halves(ranges)
    movers = set(shards_in(moving))
    result.title = (
        f"split {host} onto {replica} under load, revert, clean up, rebuild {replica}, split again"
    )
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
    d.say(f"bulk-loading {PINS:,} pins into {host}'s shards")
    result.figure(load_pins(d, topology, host, shards_in(staying) + shards_in(moving), PINS))
    load = d.track(Load(d.site, pinners, topology, group=group, max_seconds=SPLIT_CAP)).start()
    load.wait(WARM_UP)

    d.say(f"manage.py shardstore split {host}")
    ran = d.manage("shardstore", "split", host, "--to", replica, timeout=1800)
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
    result.figure(f"revert's own read-only window: {steps_window(reverted.output)}")
    load.wait(SETTLE)
    revert_seen = time.monotonic()
    report = d.finish(result, load)

    gap, began = longest_gap(load.times(moving_group), load.started, revert_began)
    result.bound(
        f"split's read-only window of the moving shards at most {WINDOW:g} s",
        gap <= WINDOW,
        f"{gap:.2f} s (from +{began - load.started:.1f} s)",
    )
    gap, began = longest_gap(load.times(moving_group), revert_began, revert_seen)
    result.bound(
        f"revert's read-only window of the moving shards at most {WINDOW:g} s",
        gap <= WINDOW,
        f"{gap:.2f} s (from +{began - load.started:.1f} s)",
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
    cleaned = _cleanup(d, result, host, number, restored)
    result.figure(f"cleanup {number}: exit {cleaned.returncode} in {cleaned.seconds:.1f} s")
    if result.bound("cleanup succeeded", cleaned.returncode == 0, f"exit {cleaned.returncode}"):
        split_again(d, result, host, replica, moving_group, Load(d.site, pinners, restored, group=group, max_seconds=SPLIT_CAP))  # fmt: skip


def _cleanup(d: Drills, result: Result, host: str, number: int, restored: Topology) -> Ran:
    """``cleanup`` drops the last other copy of the moved shards: refused until the range
    now holding them (the host's, after the revert) has a backup taken since the split."""
    store = ("--store", store_url(d))
    refused = d.manage("shardstore", "cleanup", str(number), *store, timeout=1800)
    result.bound("cleanup refused with no backup since the split", refused.returncode != 0 and "no backup of shards" in refused.output, refused.tail(1))  # fmt: skip
    for shards in (r for r in restored.ranges if r.master == host):
        backed_up(d, result, shards)
    return d.manage("shardstore", "cleanup", str(number), *store, timeout=1800)


def split_again(d: Drills, result: Result, host: str, replica: str, moving_group: str, load: Load) -> None:  # fmt: skip
    """The revert left ``replica`` out of service: ``shardstore rebuild`` makes it
    ``host``'s replica again, and ``host`` is split onto it once more, under ``load``."""
    d.say(f"manage.py shardstore rebuild {replica}")
    rebuilt = d.manage("shardstore", "rebuild", replica, timeout=REBUILD_CAP)
    result.figure(f"rebuild of {replica}: exit {rebuilt.returncode} in {rebuilt.seconds:.1f} s")
    if not result.bound("rebuild succeeded", rebuilt.returncode == 0, f"exit {rebuilt.returncode}"):  # fmt: skip
        result.figures += [f"| {line}" for line in rebuilt.tail().splitlines()]
        return
    d.track(load).start()
    load.wait(WARM_UP)
    d.say(f"manage.py shardstore split {host}, again")
    began = time.monotonic()
    ran = d.manage("shardstore", "split", host, "--to", replica, timeout=1800)
    result.figure(f"split again: exit {ran.returncode} in {ran.seconds:.1f} s")
    result.figure(f"its read-only window: {steps_window(ran.output)}")
    diff = _DIFF.search(ran.output)
    result.figure(f"its diff: {diff[0] if diff else '(not found in its output)'}")
    load.wait(SETTLE)
    seen = time.monotonic()
    if not result.bound("split again succeeded", ran.returncode == 0, f"exit {ran.returncode}"):
        result.figures += [f"| {line}" for line in ran.tail().splitlines()]
        d.finish(result, load)
        return
    result.bound("its diff clean", bool(diff and "identical" in diff[0]), "see above")
    gap, at = longest_gap(load.times(moving_group), began, seen)
    result.bound(
        f"its read-only window of the moving shards at most {WINDOW:g} s",
        gap <= WINDOW,
        f"{gap:.2f} s (from +{at - load.started:.1f} s)",
    )
    revert_again(d, result, moving_group, load)
    d.finish(result, load)


def revert_again(d: Drills, result: Result, moving_group: str, load: Load) -> None:
    """The second split reverted too (a split after a revert and a rebuild writes its new
    master's changes in a GTID domain of its own again, and its reverse stream carries
    them back), under the same load: nothing acknowledged is lost (``finish`` reads every
    write back on the map in force)."""
    number = d.source.current("shards").version
    d.say(f"manage.py shardstore split --revert {number}, the second split")
    began = time.monotonic()
    ran = d.manage("shardstore", "split", "--revert", str(number), timeout=1800)
    result.figure(f"second revert: exit {ran.returncode} in {ran.seconds:.1f} s")
    load.wait(SETTLE)
    if not result.bound("second revert succeeded", ran.returncode == 0, f"exit {ran.returncode}"):  # fmt: skip
        result.figures += [f"| {line}" for line in ran.tail().splitlines()]
        return
    gap, at = longest_gap(load.times(moving_group), began, time.monotonic())
    result.bound(
        f"its read-only window of the moving shards at most {WINDOW:g} s",
        gap <= WINDOW,
        f"{gap:.2f} s (from +{at - load.started:.1f} s)",
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
    """Comments acknowledged after the split that landed on a host no longer owning the
    shard: one in a copy the replica set aside (``*_splitN``, the staying shards), or one
    the host's copy of a moved shard holds other than as the new master does (the reverse
    stream is all that may write there)."""
    wanted: dict[tuple[str, int], list[int]] = {}
    for ack in load.acks_after(since):
        if topology.master_of(ack.shard) not in (host, replica):
            continue
        gave_up = host if ack.shard in movers else replica
        wanted.setdefault((gave_up, ack.shard), []).append(decompose(ack.comment_id).local_id)
    found = 0
    with d.admin(topology, host) as m, d.admin(topology, replica) as r:
        reverse_stream.caught_up(m, r, 60)
        for (name, shard), local_ids in wanted.items():
            ids = ", ".join(map(str, local_ids))
            if name == replica:
                found += int(r.value(f"SELECT COUNT(*) FROM `{database_name(shard)}_split{number}`.comments WHERE local_id IN ({ids})"))  # fmt: skip
                continue
            sql = f"SELECT local_id, data FROM {database_name(shard)}.comments WHERE local_id IN ({ids})"  # fmt: skip
            kept = {row["local_id"]: row["data"] for row in m.query(sql)}
            written = {row["local_id"]: row["data"] for row in r.query(sql)}
            found += sum(kept.get(local) != data for local, data in written.items())
    return found
