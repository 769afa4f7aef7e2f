"""The site's tests run on the data plane ``PINBOARD_TEST_PLANE`` asks for, and on no other:
a server that is missing must not quietly turn the ``servers`` run into an embedded one."""

from __future__ import annotations

from django.conf import settings

from pinboard.plane import DataPlane
from shardstore.backends.mysql import MySQLBackend
from shardstore.backends.sqlite import SQLiteBackend
from shardstore.cache import LocalPool, MemcachePool
from tests.site.conftest import PLANE


def test_the_site_runs_on_the_plane_the_run_asked_for(data_plane: DataPlane) -> None:
    backends = {type(backend) for backend in data_plane.store.store.backends().values()}
    pools = {type(pool) for pool in data_plane.store.pools.values()}
    redis = {url.split(":", 1)[0] for url in data_plane.graph.shards.topology.instances.values()}
    if PLANE == "servers":
        assert (backends, pools, redis) == ({MySQLBackend}, {MemcachePool}, {"redis"})
        assert len(data_plane.store.store.backends()) == 2  # shards span two hosts
    else:
        assert (backends, pools, redis) == ({SQLiteBackend}, {LocalPool}, {"memory"})
    assert settings.CELERY_TASK_ALWAYS_EAGER  # a real worker only in test_worker.py
