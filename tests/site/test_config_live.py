"""The shard map in ZooKeeper, followed live by every process: a gunicorn with two workers and
a Celery worker serve a newly published version within a second, and keep serving (and boot)
from their local copy while ZooKeeper is down.

Real processes on real servers (ZooKeeper, Redis as the broker); the shards are SQLite files
in the test's directory, which is all these processes need to serve ``/readyz`` and a page.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pinboard.catalog import CATALOG
from shardstore import Store, Topology, init_shards
from shardstore.control.sources import open_source
from tests.config_documents import eventually, sqlite_shard_map
from tests.site.conftest import PLANE
from toolkit.site_processes import CeleryWorker, GunicornSite

# These start processes of their own on SQLite shards: whatever plane the run's site tests
# use, once per `make test` is enough.
pytestmark = pytest.mark.skipif(PLANE == "servers", reason="runs once, with the embedded plane")

_roots = itertools.count(1)


def publish(spec: str, document: dict[str, Any], reason: str) -> float:
    """Publish; returns the moment it was published (time.monotonic)."""
    source = open_source(spec)
    try:
        source.publish("shards", document, author="test", reason=reason)
        return time.monotonic()
    finally:
        source.close()


def env_for(tmp_path: Path, spec: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "pinboard.settings.dev",
        "PINBOARD_VAR_DIR": str(tmp_path / "var"),
        "PINBOARD_TOPOLOGY": spec,
        "PINBOARD_ALLOWED_HOSTS": "127.0.0.1",
        **extra,
    }


def health(site: GunicornSite) -> dict[str, Any]:
    with urllib.request.urlopen(site.url("/readyz"), timeout=5) as response:
        report: dict[str, Any] = json.loads(response.read())
        return report


def workers_seen(site: GunicornSite, version: int, workers: int, timeout: float) -> set[str]:
    """Ask /readyz from several threads at once until ``workers`` processes say ``version``."""
    seen: set[str] = set()
    deadline = time.monotonic() + timeout

    def ask() -> None:
        while len(seen) < workers and time.monotonic() < deadline:
            report = health(site)
            if report["config"].get("shards") == version:
                seen.add(report["process"])
            else:
                seen.discard(report["process"])

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return seen


@pytest.fixture
def cluster(
    tmp_path: Path, zookeeper_server: Any, redis_server: Any
) -> Iterator[Callable[..., Any]]:
    """Start the site (and a worker) on a fresh config root in the suite's ZooKeeper."""
    spec = f"zk://{zookeeper_server.address}/live-{next(_roots)}"
    init_shards(
        Store(
            Topology.from_json({**sqlite_shard_map(tmp_path / "shards"), "version": 1}),
            catalog=CATALOG,
        )
    )
    publish(spec, sqlite_shard_map(tmp_path / "shards"), "first")
    started: list[Any] = []

    def start(*, worker: bool = False, concurrency: int | None = None) -> Any:
        broker = f"redis://{redis_server.host}:{redis_server.port}/14"
        env = env_for(tmp_path, spec, PINBOARD_BROKER_URL=broker)
        site = GunicornSite(env, tmp_path / "gunicorn.log").start()
        started.append(site)
        site.wait_ready()
        if worker:
            celery = CeleryWorker(env, tmp_path / "worker.log", concurrency=concurrency).start()
            started.append(celery)
            return spec, site, celery
        return spec, site

    yield start
    for process in started:
        process.stop()


def test_every_process_serves_a_new_version_within_a_second(cluster: Any, tmp_path: Path) -> None:
    spec, site, worker = cluster(worker=True)
    assert len(workers_seen(site, 1, 2, timeout=30)) == 2  # both gunicorn workers are up
    assert eventually(lambda: "config shards version" in worker.output() or "ready." in worker.output(), 60)  # fmt: skip

    published = publish(spec, sqlite_shard_map(tmp_path / "shards", open_to=7), "close 8..15")
    seen = workers_seen(site, 2, 2, timeout=5)
    web_seconds = time.monotonic() - published
    assert len(seen) == 2, f"only {len(seen)} of 2 gunicorn workers switched"
    assert eventually(lambda: "config shards version 2 in force" in worker.output(), 5)
    worker_seconds = time.monotonic() - published
    print(f"\npropagation: both gunicorn workers {web_seconds:.3f}s, worker <= {worker_seconds:.3f}s")  # fmt: skip
    assert web_seconds <= 1.0 and worker_seconds <= 1.0


def test_a_process_that_stops_leaves_the_followers_at_once(cluster: Any) -> None:
    """Not when its ZooKeeper session expires (seconds later): a split waits until every
    listed process follows its read-only map, and a gunicorn worker recycled meanwhile
    would hold the window open."""
    spec, site, worker = cluster(worker=True, concurrency=2)
    source = open_source(spec)
    try:
        # Two gunicorn workers and the pool's two children (the pool's parent runs no task).
        assert eventually(lambda: len(source.followers()) == 4, 60), source.followers()
        site.stop()
        worker.stop()
        stopped = time.monotonic()
        assert eventually(lambda: not source.followers(), 10), source.followers()
        # A session that merely lapsed takes the negotiated timeout (4 s or more) to go.
        assert time.monotonic() - stopped < 2.0
    finally:
        source.close()


def test_zookeeper_down_the_site_serves_and_boots_from_its_local_copy(
    private_zookeeper: Any, tmp_path: Path
) -> None:
    spec = f"zk://{private_zookeeper.address}/outage"
    init_shards(
        Store(
            Topology.from_json({**sqlite_shard_map(tmp_path / "shards"), "version": 1}),
            catalog=CATALOG,
        )
    )
    publish(spec, sqlite_shard_map(tmp_path / "shards"), "first")
    publish(spec, sqlite_shard_map(tmp_path / "shards", open_to=11), "second")
    env = env_for(tmp_path, spec)
    site = GunicornSite(env, tmp_path / "gunicorn.log", workers=1).start()
    try:
        site.wait_ready()
        assert health(site)["source"]["connected"] is True
        for path in ("/healthz", "/readyz"):  # neither names the source: it maps the cluster
            with urllib.request.urlopen(site.url(path), timeout=5) as response:
                assert private_zookeeper.address not in response.read().decode()
        private_zookeeper.halt()
        assert eventually(lambda: health(site)["source"]["connected"] is False, 30)
        assert health(site)["config"]["shards"] == 2
        with urllib.request.urlopen(site.url("/login/"), timeout=5) as page:
            assert page.status == 200  # pages still served
        site.stop()
        assert len(re.findall("config source unreachable", site.output())) == 1  # logged once

        site = GunicornSite(env, tmp_path / "gunicorn-2.log", workers=1).start()
        site.wait_ready()
        report = health(site)
        assert report["config"]["shards"] == 2 and report["source"]["from_local_copy"] == ["shards"]

        private_zookeeper.restart()
        assert eventually(lambda: health(site)["source"]["connected"] is True, 30)
        publish(spec, sqlite_shard_map(tmp_path / "shards", open_to=3), "after the outage")
        assert eventually(lambda: health(site)["config"]["shards"] == 3, 5)
    finally:
        site.stop()
