"""A real Celery worker on a real Redis broker fans a new pin out to followers' feeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from pinboard import celery_app
from pinboard.boards.actions import create_board
from pinboard.follows.actions import follow_user
from pinboard.pins.actions import create_pin
from pinboard.store import get_feeds, get_store
from tests.site.conftest import image_file

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def worker(tmp_path, redis_server, memcached_server, data_plane):
    """A `celery worker` process on the same shards, Redis and memcached as this process."""
    topology = tmp_path / "topology.json"
    topology.write_text(json.dumps(get_store().topology.as_json()))
    broker = f"redis://127.0.0.1:{redis_server.port}/15"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "pinboard.settings.dev",
        "PINBOARD_VAR_DIR": str(tmp_path / "var"),
        "PINBOARD_TOPOLOGY": str(topology),
        "PINBOARD_REDIS_URL": redis_server.url,
        "PINBOARD_MEMCACHED": memcached_server.address,
        "PINBOARD_BROKER_URL": broker,
    }
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115 - closed at teardown
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "pinboard", "worker", "--pool=solo", "--loglevel=info"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    saved = {k: celery_app.conf[k] for k in ("broker_url", "task_always_eager")}
    celery_app.conf.update(broker_url=broker, task_always_eager=False)
    _drop_producers()
    try:
        yield tmp_path / "worker.log"
    finally:
        celery_app.conf.update(saved)
        _drop_producers()
        process.terminate()
        process.wait(timeout=30)
        log.close()


def _drop_producers() -> None:
    """Celery keeps the producer pool of the first broker it connected to (an earlier eager
    retry may have made one for memory://): drop it so the new broker_url is used."""
    celery_app.pool.force_close_all()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


def test_a_new_pin_reaches_followers_feeds_through_a_worker(worker, make_user):
    owner, fans = make_user("owner"), [make_user("fan") for _ in range(3)]
    board = create_board(owner["id"], "Worker board")
    for fan in fans:
        follow_user(fan["id"], owner["id"])
        get_feeds().mark_seen(fan["id"])  # active pinners get fan-out
    pin = create_pin(owner["id"], board["id"], image_file(), "Fanned out by a worker")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        feeds = [[pin_id for _, pin_id in get_feeds().entries(fan["id"])] for fan in fans]
        if all(pin["id"] in feed for feed in feeds):
            break
        time.sleep(0.2)
    else:
        pytest.fail("the pin did not reach the feeds:\n" + worker.read_text()[-3000:])
    assert all(feed.count(pin["id"]) == 1 for feed in feeds)
    assert "fan_out_batch" in worker.read_text()  # done by the worker, not eagerly here
    assert settings.CELERY_TASK_ALWAYS_EAGER  # the rest of the suite stays eager
