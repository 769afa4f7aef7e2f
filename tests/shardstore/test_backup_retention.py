"""``backup prune``: a directory store keeps what the retention window needs and nothing
older, each host's newest backup and the binary logs a kept backup needs whatever their age;
a bucket is left to its own lifecycle rule."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from shardstore.backups.binlogs import archived
from shardstore.backups.manifest import Manifest, Part, manifests
from shardstore.backups.retention import prune
from shardstore.backups.store import BackupStoreError, DirectoryStore

from .test_reopen import cli

DAY = 86400.0
NOW = 1_800_000_000.0


def backup(store: DirectoryStore, host: str, began: float, *, finished: bool = True) -> str:
    name = _name(began)
    part = Part(f"{host}/{name}/part-000.xb.zst", 3, hashlib.sha256(b"abc").hexdigest())
    store.put(part.key, b"abc")
    if finished:
        made = Manifest(name, host, "0-3", "0-1-5", began, began + 60, 3, "test", [part])
        store.put(made.key, made.to_json())
    return f"{host}/{name}"


def log(store: DirectoryStore, host: str, number: int, created: float, *, closed: bool) -> None:
    base = f"binlogs/{host}/{host}-bin.{number:06d}@{int(created)}"
    data = b"events"
    store.put(f"{base}/{0:015d}-{len(data)}.{hashlib.sha256(data).hexdigest()}", data)
    store.put(f"{base}/starts", f"0-1-{number}".encode())
    if closed:
        closing = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        store.put(f"{base}/closed", json.dumps(closing).encode())


def _name(began: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(began))


def test_prune_keeps_the_window_each_host_s_newest_and_the_logs_kept_backups_need(tmp_path: Path) -> None:  # fmt: skip
    store = DirectoryStore(tmp_path)
    old_b = backup(store, "B", NOW - 12 * DAY)
    kept_b = backup(store, "B", NOW - 7 * DAY)
    lone_c = backup(store, "C", NOW - 20 * DAY)  # C's only backup: kept, however old
    unfinished = backup(store, "B", NOW - 9 * DAY, finished=False)
    fresh_unfinished = backup(store, "B", NOW - 1 * DAY, finished=False)
    for number, age in enumerate((25, 21, 19, 6, 1), 1):
        log(store, "A", number, NOW - age * DAY, closed=age > 1)

    done = prune(store, 8 * DAY, NOW)

    assert done.backups == sorted([old_b, unfinished])
    assert [f"{m.host}/{m.name}" for m in manifests(store)] == [lone_c, kept_b]
    assert store.keys(f"{fresh_unfinished}/")  # may still be being written
    assert not (tmp_path / old_b).exists()  # no empty directory left behind
    # C's backup began 20 days ago: the log it starts in (begun 21 days ago) and all later
    # ones stay; the one that ended before it began goes.
    assert done.logs == [f"A/A-bin.000001@{int(NOW - 25 * DAY)}"]
    assert [a.number for a in archived(store, "A")] == [2, 3, 4, 5]

    assert prune(store, 8 * DAY, NOW).backups == []  # nothing more the second time


def test_the_command_prunes_a_directory_and_leaves_a_bucket_to_its_lifecycle(tmp_path: Path) -> None:  # fmt: skip
    store = DirectoryStore(tmp_path / "backups")
    backup(store, "B", 1_000_000_000.0)  # 2001: long past any window
    newest = backup(store, "B", 1_000_100_000.0)
    url = f"file://{tmp_path / 'backups'}"
    status, said = cli(tmp_path, "backup", "prune", "--store", url)
    assert status == 0 and said.startswith(f"pruned 1 backups and 0 binary logs from {url}")
    assert [f"{m.host}/{m.name}" for m in manifests(store)] == [newest]
    status, said = cli(tmp_path, "backup", "prune", "--store", url, "--keep-days", "0")
    assert status != 0 and "--keep-days is 1 to 3650" in said
    status, said = cli(tmp_path, "backup", "prune", "--store", "s3://bucket/prefix")
    assert status == 0 and "the bucket's lifecycle rule expires" in said


@pytest.mark.parametrize("key", ["../outside", "/etc/passwd"])
def test_a_store_deletes_nothing_outside_itself(tmp_path: Path, key: str) -> None:
    with pytest.raises(BackupStoreError):
        DirectoryStore(tmp_path / "store").delete([key])
