"""Long jobs through real Celery workers on a real Redis broker, started and followed with
``manage.py shardstore job`` as an operator would: a worker killed with ``kill -9`` in the
middle of a chunk, and a new worker that finishes the job with every chunk run to
completion exactly once; chunks delivered again after they are done are not run again.

The workers and ``manage.py`` share a control database (SQLite, in the test's directory)
that this process reads directly. The kind ``test-chunks`` (tests/site/job_kinds.py)
counts its runs in a file.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from pinboard.data_plane import cached_store
from tests.config_documents import eventually, sqlite_shard_map
from tests.site.conftest import PLANE, SiteServers
from tests.site.job_kinds import runs
from toolkit.processes import free_port
from toolkit.site_processes import ROOT, CeleryWorker, manage

BROKER_DB = 13
#: Short, so that the chunk of the killed worker is delivered again within seconds.
VISIBILITY_TIMEOUT = 2


def env_for(tmp_path: Path, topology: Path, broker: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "pinboard.settings.dev",
        "PINBOARD_VAR_DIR": str(tmp_path / "var"),
        "PINBOARD_TOPOLOGY": str(topology),
        "PINBOARD_BROKER_URL": broker,
        "PINBOARD_BROKER_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT),
        "PINBOARD_JOB_MODULES": "tests.site.job_kinds",
        **extra,
    }


@pytest.fixture
def broker(redis_server: Any) -> Iterator[str]:
    import redis

    url = f"redis://{redis_server.host}:{redis_server.port}/{BROKER_DB}"
    client = redis.Redis.from_url(url)
    client.flushdb()  # no task left by another test
    yield url
    client.flushdb()
    client.close()


def chunks(tmp_path: Path, job_id: int) -> list[tuple[int, str, int]]:
    """``(index, state, attempts)`` of the job's chunks, from the shared control database."""
    with sqlite3.connect(tmp_path / "var" / "control.sqlite3") as db:
        rows = db.execute(
            'SELECT "index", state, attempts FROM ops_jobchunk WHERE job_id = ? ORDER BY 1',
            (job_id,),
        )
        return [(int(i), str(s), int(a)) for i, s, a in rows]


def started_job(output: str) -> int:
    found = re.search(r"^job (\d+) started", output, re.M)
    assert found, output
    return int(found[1])


@pytest.mark.skipif(PLANE == "servers", reason="runs once, with the embedded plane")
def test_a_worker_killed_mid_chunk_and_a_new_worker_finish_the_job_each_chunk_once(
    tmp_path: Path, broker: str
) -> None:
    topology = tmp_path / "shards.json"
    topology.write_text(json.dumps({**sqlite_shard_map(tmp_path / "shards"), "version": 1}))
    env = env_for(tmp_path, topology, broker)
    manage(env, "migrate", "--verbosity", "0")
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    (runs_dir / "block").touch()  # shard 2's chunk waits while this exists
    first = CeleryWorker(env, tmp_path / "worker-1.log").start()
    second = CeleryWorker(env, tmp_path / "worker-2.log")
    try:
        out = manage(env, "shardstore", "job", "start", "test-chunks",
                     "--param", f"dir={runs_dir}", "--param", "block=2")  # fmt: skip
        job = started_job(out)
        assert first.process is not None
        pid = first.process.pid
        held = eventually(lambda: ("start", 2, pid) in runs(runs_dir), timeout=60)
        assert held, first.output()[-3000:]
        os.kill(pid, signal.SIGKILL)  # mid-chunk: its task is neither acknowledged nor rejected
        first.process.wait(timeout=10)
        (runs_dir / "block").unlink()
        second.start()

        status = manage(env, "shardstore", "job", "status", str(job), "--wait", "--timeout", "90")
        assert f"job {job} test-chunks: 16/16 chunks done (done)" in status, status
        events = runs(runs_dir)
        for shard in range(16):
            done = [e for e in events if e[:2] == ("done", shard)]
            assert len(done) == 1, (shard, events)  # every chunk ran to completion exactly once
        runs_of_2 = [p for e, s, p in events if (e, s) == ("start", 2)]
        assert runs_of_2[0] == pid and runs_of_2[1] != pid  # again, on the new worker
        assert sum(1 for e in events if e[0] == "start") == 17  # shard 2 twice, no other twice
        assert chunks(tmp_path, job) == [(i, "done", 2 if i == 2 else 1) for i in range(16)]

        # Every chunk delivered again, done already: the worker skips each, runs none.
        ids = _chunk_ids(tmp_path, job)
        sender = Celery("resender", broker=broker, set_as_current=False)
        try:
            for chunk_id in ids:
                sender.send_task("pinboard.ops.tasks.run_job_chunk", args=[chunk_id], queue="jobs")
        finally:
            sender.close()
        skipped = eventually(lambda: second.output().count("skipped: done already") == 16, 30)
        assert skipped, second.output()[-3000:]
        assert runs(runs_dir) == events
        assert "0 chunks queued again" in manage(env, "shardstore", "job", "resume", str(job))
        assert chunks(tmp_path, job) == [(i, "done", 2 if i == 2 else 1) for i in range(16)]
    finally:
        second.stop()
        first.stop()


def _chunk_ids(tmp_path: Path, job_id: int) -> list[int]:
    with sqlite3.connect(tmp_path / "var" / "control.sqlite3") as db:
        return [int(i) for (i,) in db.execute("SELECT id FROM ops_jobchunk WHERE job_id = ?", (job_id,))]  # fmt: skip


def test_a_reconcile_job_on_a_worker_repairs_mysql(
    tmp_path: Path, broker: str, site_servers: SiteServers, cast: dict[str, Any]
) -> None:
    """On the servers plane: a worker on the site's MariaDB shards, memcached and Redis."""
    from shardstore import shard_of
    from shardstore.mappings import _insert

    topology = tmp_path / "shards.json"
    topology.write_text(json.dumps(cached_store().topology.as_json()))
    env = env_for(
        tmp_path, topology, broker,
        PINBOARD_REDIS_URL=site_servers.redis, PINBOARD_MEMCACHED=site_servers.memcached,
    )  # fmt: skip
    manage(env, "migrate", "--verbosity", "0")
    bob, pin = cast["bob"], cast["pin"]
    store = cached_store()
    with store.store.session(shard_of(bob["id"]), write=True) as session:
        _insert(session, "user_likes_pins", bob["id"], pin, 1)  # a like without its inverse
    worker = CeleryWorker(env, tmp_path / "worker.log").start()
    try:
        out = manage(env, "shardstore", "job", "start", "reconcile", "--per-chunk", "4",
                     "--wait", "--timeout", "90")  # fmt: skip
    finally:
        worker.stop()
    job = started_job(out)
    assert f"job {job} reconcile: 4/4 chunks done (done)" in out, out
    repaired = re.search(r"missing_inverse (\d+)", out)
    assert repaired is not None and int(repaired[1]) >= 1  # ours (other tests may leave more)
    assert store.store.mapping("pin_liked_by_users").contains(pin, bob["id"])
    assert "run_job_chunk" in worker.output()  # run by the worker, not here


@pytest.mark.skipif(PLANE == "servers", reason="runs once, with the embedded plane")
def test_with_the_broker_down_a_job_is_made_and_resumed_once_it_is_back(
    tmp_path: Path, broker: str, redis_server: Any
) -> None:
    topology = tmp_path / "shards.json"
    topology.write_text(json.dumps({**sqlite_shard_map(tmp_path / "shards"), "version": 1}))
    down = f"redis://127.0.0.1:{free_port()}/0"
    env = env_for(tmp_path, topology, down)
    manage(env, "migrate", "--verbosity", "0")
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir()
    start = ["shardstore", "job", "start", "test-chunks", "--param", f"dir={runs_dir}"]
    failed = subprocess.run(
        [sys.executable, "manage.py", *start], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip
    assert failed.returncode == 1
    assert "job 1 is made, but its chunks could not be queued" in failed.stdout, failed.stdout
    assert "`job resume 1` queues them" in failed.stdout
    assert chunks(tmp_path, 1) == [(i, "pending", 0) for i in range(16)]

    env = env_for(tmp_path, topology, broker)  # the broker is back
    worker = CeleryWorker(env, tmp_path / "worker.log").start()
    try:
        assert "16 chunks queued again" in manage(env, "shardstore", "job", "resume", "1")
        status = manage(env, "shardstore", "job", "status", "1", "--wait", "--timeout", "90")
    finally:
        worker.stop()
    assert "job 1 test-chunks: 16/16 chunks done (done)" in status, status
    assert sorted(shard for event, shard, _ in runs(runs_dir) if event == "done") == list(range(16))
