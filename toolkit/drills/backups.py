"""The backup drills, each with the binary-log archiver running (``backup archive``, into the
cluster's store ``var/cluster/backups``) and a backup of its range taken first, from a
replica:

- ``verify``: ``backup verify`` passes on a healthy range; one part of the backup corrupted,
  it fails, and ``BackupVerifyFailed`` fires in the cluster's Prometheus; the part put back,
  it passes again;
- ``bad-delete``: under load, a pinner's board and pin rows (and their list rows) deleted
  directly in MySQL, as a bug would; ``restore-shard`` to the second before shows them
  missing, by ID, and ``--copy-back`` writes them back: the pinner's board and pin read
  through the site again (memcached flushed), and every write the load had acknowledged,
  before and after, reads back;
- ``lost``: under load, every host of a range killed (``kill -9``) and its data directory
  deleted; ``restore --to latest`` onto the map's spare. Every write acknowledged more than
  ``RPO`` seconds before the loss reads back; how many later ones are missing is printed,
  and the time from the loss to the range taking writes again (the RTO). It runs last: its
  range is left on the spare alone, and the lost hosts new, empty and out of service.
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from shardstore.backups.manifest import manifests
from shardstore.backups.store import DirectoryStore
from shardstore.control import backup_records
from shardstore.control.replacement import spares
from shardstore.ids import decompose, shard_of
from shardstore.topology import ShardRange, Topology, database_name
from toolkit.cluster import mysql
from toolkit.load.pinners import make_pinner
from toolkit.processes import HOST
from toolkit.servers.base import _PREPARED

from .base import SETTLE, WARM_UP, DrillError, Drills, Result
from .caches import flush_memcached

#: Every write acknowledged this long before a range is lost is restored (the issue's RPO).
RPO = 5.0
#: The archiver's passes, and how long a drill waits for the archive to hold a moment.
ARCHIVE_INTERVAL = "0.5"
ARCHIVED_WITHIN = 30.0
#: How long Prometheus is given to fire an alert (its rules run every 5 s).
ALERT_WITHIN = 60.0
#: Bounds on the commands, in seconds.
RESTORE_CAP = 900.0


def store_dir(d: Drills) -> Path:
    return d.cluster.directory / "backups"


def store_url(d: Drills) -> str:
    return f"file://{store_dir(d)}"


def span_of(shards: ShardRange) -> str:
    return f"{shards.first}-{shards.last}"


@contextmanager
def archiving(d: Drills) -> Iterator[None]:
    """The archiver running while the block runs: the cluster's (``backup_schedule.py``), or
    one of the drill's own where the cluster runs none."""
    if d.cluster.running("archiver"):
        yield
        return
    spool = d.dir / "archiver-spool"
    command = ("shardstore", "backup", "archive", "--store", store_url(d), "--spool", str(spool), "--instance", "drill-archiver", "--interval", ARCHIVE_INTERVAL)  # fmt: skip
    with d.running({"archiver": command}):
        yield


def caught_up(d: Drills, result: Result, master: str) -> bool:
    """Wait until the archive has held all ``master`` logged at some moment after now (as
    the archiver records it, every few seconds), within ``ARCHIVED_WITHIN``: the figure is
    how long that took, a bound on the archive's lag under the drill's load."""
    moment = time.time()
    deadline = time.monotonic() + ARCHIVED_WITHIN
    while time.monotonic() < deadline:
        if backup_records.status(d.source).archived.get(master, 0.0) > moment:
            result.figure(f"{master}'s archive held all it had logged {time.time() - moment:.1f} s later")  # fmt: skip
            return result.bound(f"{master}'s archive caught up", True, f"within {ARCHIVED_WITHIN:g} s")  # fmt: skip
        time.sleep(0.5)
    return result.bound(f"{master}'s archive caught up", False, f"not within {ARCHIVED_WITHIN:g} s")  # fmt: skip


def backed_up(d: Drills, result: Result, shards: ShardRange) -> bool:
    ran = d.manage("shardstore", "backup", "take", span_of(shards), "--store", store_url(d), timeout=RESTORE_CAP)  # fmt: skip
    result.figure(f"backup of {span_of(shards)}: {ran.tail(1)}")
    return result.bound(f"backup of {span_of(shards)} taken from a replica", ran.returncode == 0, f"exit {ran.returncode}")  # fmt: skip


def verify(d: Drills, result: Result) -> None:
    """``backup verify`` passes, fails on a corrupt part (its alert firing), passes again."""
    topology = d.topology()
    shards = topology.ranges[0]
    span = span_of(shards)
    result.title = f"the backup of {span} verified, then one part corrupted"
    with archiving(d):
        if not backed_up(d, result, shards):
            return
        caught_up(d, result, shards.master)
        ran = d.manage("shardstore", "backup", "verify", span, "--store", store_url(d), timeout=RESTORE_CAP)  # fmt: skip
        result.figure(f"verify: exit {ran.returncode} in {ran.seconds:.1f} s: {ran.output.splitlines()[-1][:300] if ran.output else ''}")  # fmt: skip
        result.bound("a healthy backup verifies", ran.returncode == 0 and ran.output.startswith("verified:"), ran.tail(2))  # fmt: skip

        made = [m for m in manifests(DirectoryStore(store_dir(d))) if span in m.ranges][-1]
        part = store_dir(d) / made.parts[0].key
        whole = part.read_bytes()
        part.write_bytes(bytes([whole[0] ^ 0xFF]) + whole[1:])
        try:
            ran = d.manage("shardstore", "backup", "verify", span, "--store", store_url(d), timeout=RESTORE_CAP)  # fmt: skip
            result.bound("a backup with one corrupt part fails its verification", ran.returncode == 1 and "does not match its manifest's sha256" in ran.output, ran.tail(2))  # fmt: skip
            firing = _alert_firing(d, "BackupVerifyFailed", span)
            result.bound(f"BackupVerifyFailed fires for {span} within {ALERT_WITHIN:g} s", firing is not None, f"after {firing:.0f} s" if firing is not None else "not firing")  # fmt: skip
        finally:
            part.write_bytes(whole)
        ran = d.manage("shardstore", "backup", "verify", span, "--store", store_url(d), timeout=RESTORE_CAP)  # fmt: skip
        result.bound("the part put back, it verifies again", ran.returncode == 0, ran.tail(1))


def _alert_firing(d: Drills, name: str, span: str) -> float | None:
    """Seconds until Prometheus fires ``name`` for range ``span``; None if it does not."""
    began = time.monotonic()
    url = f"http://{HOST}:{d.cluster.port('prometheus')}/api/v1/alerts"
    while time.monotonic() - began < ALERT_WITHIN:
        with urllib.request.urlopen(url, timeout=5) as answer:
            alerts = json.load(answer)["data"]["alerts"]
        if any(a["labels"].get("alertname") == name and a["labels"].get("range") == span and a["state"] == "firing" for a in alerts):  # fmt: skip
            return time.monotonic() - began
        time.sleep(1)
    return None


def bad_delete(d: Drills, result: Result) -> None:
    """A pinner's board and pin deleted in MySQL by a 'bug', shown and written back."""
    topology = d.topology()
    victim = make_pinner(d.site, "victim")
    shard = shard_of(victim.user_id)
    if {shard_of(victim.board_id), shard_of(victim.pin_id)} != {shard}:
        raise DrillError("the pinner's board and pin are not on the pinner's shard")
    shards, spare = topology.range_of(shard), _spare(d)
    result.title = f"a bad DELETE on shard {shard} undone with restore-shard onto {spare}"
    load = d.load(topology)
    with archiving(d):
        load.wait(WARM_UP)
        if not backed_up(d, result, shards):
            return
        wanted = int(time.time())  # the second before the bug
        time.sleep(wanted + 1.05 - time.time())
        deleted = _the_bug(d, topology, shards.master, shard, [victim.board_id, victim.pin_id])
        result.figure(f"the bug at {_utc(wanted + 1)}: {deleted} rows of shard {shard} deleted on {shards.master} (its board, its pin, their list rows)")  # fmt: skip
        load.wait(2.0)  # writes after the bug, on this shard and others
        caught_up(d, result, shards.master)
        restore = ("shardstore", "restore-shard", str(shard), "--to", _utc(wanted), "--into", spare, "--store", store_url(d))  # fmt: skip
        shown = d.manage(*restore, timeout=RESTORE_CAP)
        result.figure(f"restore-shard: exit {shown.returncode} in {shown.seconds:.1f} s")
        missing = [line.strip() for line in shown.output.splitlines() if line.strip().startswith("missing:")]  # fmt: skip
        named = all(any(str(i) in line for line in missing) for i in (victim.board_id, victim.pin_id))  # fmt: skip
        result.bound("the comparison names the deleted board and pin missing", shown.returncode == 0 and named, "; ".join(missing) or shown.tail(3))  # fmt: skip
        back = d.manage(*restore, "--copy-back", timeout=RESTORE_CAP)
        wrote = next((line.strip() for line in back.output.splitlines() if "rows written back" in line), back.tail(2))  # fmt: skip
        result.bound("--copy-back writes every deleted row back", back.returncode == 0 and wrote.startswith(f"{deleted} rows written back"), wrote)  # fmt: skip
    flush_memcached(d.cluster)
    seen = [d.site.call("GET", path, token=victim.token).status for path in (f"/boards/{victim.board_id}", f"/pins/{victim.pin_id}")]  # fmt: skip
    result.bound("the pinner's board and pin read through the site again (memcached flushed)", seen == [200, 200], seen)  # fmt: skip
    d.finish(result, load)


def _the_bug(d: Drills, topology: Topology, master: str, shard: int, ids: list[int]) -> int:
    """Delete the objects ``ids`` and every list row naming them from ``shard``'s database
    on ``master``, as an application bug would; how many rows."""
    database, deleted = database_name(shard), 0
    locals_by_table = {"boards": decompose(ids[0]).local_id, "pins": decompose(ids[1]).local_id}
    marks = ", ".join(["%s"] * len(ids))
    with d.admin(topology, master) as m:
        for row in m.query(f"SHOW TABLES FROM {database}"):
            table = str(next(iter(row.values())))
            params: tuple[int, ...]
            if table in locals_by_table:
                where, params = "local_id = %s", (locals_by_table[table],)
            elif m.query(f"SHOW COLUMNS FROM {database}.{table} LIKE 'to_id'") and table != "mapping_counts":  # fmt: skip
                where, params = f"from_id IN ({marks}) OR to_id IN ({marks})", (*ids, *ids)
            else:
                continue
            deleted += int(m.value(f"SELECT COUNT(*) FROM {database}.{table} WHERE {where}", params))  # fmt: skip
            m.query(f"DELETE FROM {database}.{table} WHERE {where}", params)
    return deleted


def range_lost(d: Drills, result: Result) -> None:
    """Every host of a range killed and wiped; the range restored onto the spare."""
    topology = d.topology()
    backed = [r for r in topology.ranges if set(r.replicas) - set(topology.out_of_service)]
    if not backed:
        raise DrillError("no range has a replica in service to back up (start a fresh cluster)")
    shards = backed[-1]
    span, lost, spare = span_of(shards), [shards.master, *shards.replicas], _spare(d)
    others = sorted({r.master for r in topology.ranges} - {shards.master})
    result.title = f"every host of {span} ({', '.join(lost)}) killed and wiped, restored onto {spare}"  # fmt: skip
    load = d.load(topology)
    with archiving(d):
        load.wait(WARM_UP)
        if not backed_up(d, result, shards):
            return
        # As a running deploy's archiver has: everything the master had logged archived once.
        caught_up(d, result, shards.master)
        load.wait(RPO)  # writes going on after the backup
        d.say(f"kill -9 {', '.join(lost)}; their data directories deleted")
        killed = time.monotonic()
        for name in lost:
            d.cluster[name].halt(kill=True)
            if name == shards.master:  # the loss: no write is acknowledged after it
                killed = time.monotonic()
        for name in lost:
            server = d.cluster.mariadb(name)
            shutil.rmtree(server.datadir)
            (server.datadir.parent / _PREPARED).unlink(missing_ok=True)
        ran = d.manage("shardstore", "restore", span, "--to", "latest", "--onto", spare, "--store", store_url(d), timeout=RESTORE_CAP)  # fmt: skip
        result.figure(f"restore: exit {ran.returncode} in {ran.seconds:.1f} s")
        result.bound(f"{span} restored onto {spare}", ran.returncode == 0, ran.tail(3))
        load.wait(SETTLE)
    load.stop()
    first = next((t for t in load.times(shards.master) if t > killed), None)
    result.figure(f"RTO: {span} took writes again {first - killed:.1f} s after the loss" if first else f"{span} took no write after the loss")  # fmt: skip
    result.bound(f"{span} takes writes again", first is not None, f"{load.acked_since(killed, shards.master)} acknowledged since")  # fmt: skip
    with d.store() as store:
        missing = load.missing(store)
    early = [a for a in missing if a.at <= killed - RPO]
    late = [a for a in missing if a.at > killed - RPO]
    acked = [a for a in load.acks_after(0.0) if a.at <= killed - RPO]
    result.bound(f"writes acknowledged more than {RPO:g} s before the loss, missing", not early, f"{len(early)} of {len(acked)}")  # fmt: skip
    result.figure(f"writes acknowledged in the last {RPO:g} s before the loss, missing: {len(late)} (RPO)")  # fmt: skip
    report = load.report(Counter(ack.group for ack in missing))
    errors = report.errors(*others)
    result.bound("errors on the other ranges, writes and reads", errors == 0, errors)
    result.load(report)
    for name in lost:  # new, empty servers, out of service: a person rebuilds them
        d.cluster.mariadb(name).prepare()  # mariadb-install-db, its data directory gone
        d.cluster[name].restart()
        mysql.create_users(d.cluster.port(name), d.cluster.secrets)
    result.notes.append(f"{', '.join(lost)} run again, new and empty, out of service: rebuild them (shardstore rebuild) to give {span} its replicas")  # fmt: skip


def _spare(d: Drills) -> str:
    found = spares(d.source.current("shards").document)
    if not found:
        raise DrillError("the shard map has no spare host (start a fresh cluster)")
    return found[0]


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
