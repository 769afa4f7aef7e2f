"""A real Celery worker on a real Redis broker fans a new pin out to followers' feeds, and
delivers notifications (the ``worker`` fixture is in conftest.py).

Only on the site's ``servers`` plane: the worker is another process, and the embedded
plane's pools and Redis live inside this one.
"""

from __future__ import annotations

import json
import time

import pytest
import redis
from celery.app.routes import prepare as prepare_routes
from django.conf import settings

from pinboard import celery_app, ledger, request_id
from pinboard.boards.actions import create_board
from pinboard.data_plane import cached_store, get_feeds, get_notifications
from pinboard.follows.actions import follow_user
from pinboard.likes.actions import like
from pinboard.pins.actions import create_pin
from tests.site.scrape import scrape
from toolkit.images import image_upload


def test_a_new_pin_reaches_followers_feeds_through_a_worker(worker, worker_metrics, make_user):
    owner, fans = make_user("owner"), [make_user("fan") for _ in range(3)]
    board = create_board(owner["id"], "Worker board")
    for fan in fans:
        follow_user(fan["id"], owner["id"])
        get_feeds().mark_seen(fan["id"])  # active pinners get fan-out
    pin = create_pin(owner["id"], board["id"], image_upload(), "Fanned out by a worker")
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
    # The worker counted it: its tasks, the fan-out's lag, and the fleet's figures.
    samples = scrape(f"http://{worker_metrics}/metrics")
    batch = {"task": "pinboard.feeds.tasks.fan_out_batch", "state": "SUCCESS"}
    assert samples.total("pinboard_task_duration_seconds_count", **batch) >= 2  # owner, fans
    assert samples.total("pinboard_fanout_lag_seconds_count") >= 2
    assert samples.total("shardstore_cache_lookups_total", pool="pins") >= 1
    assert samples.label_values("pinboard_queue_depth", "queue") == {"celery", "jobs"}
    assert samples.total("pinboard_mysql_up") == len(cached_store().topology.hosts)


def test_a_like_reaches_the_pins_owner_through_a_worker(worker, make_user):
    owner, fan = make_user("owner"), make_user("fan")
    board = create_board(owner["id"], "Liked board")
    pin = create_pin(owner["id"], board["id"], image_upload(), "Liked through a worker")
    like(fan["id"], pin["id"])
    deadline = time.monotonic() + 60
    while not get_notifications().entries(owner["id"]):
        if time.monotonic() > deadline:
            pytest.fail("no notification reached the owner:\n" + worker.read_text()[-3000:])
        time.sleep(0.2)
    [entry] = get_notifications().entries(owner["id"])
    assert (entry.kind, entry.actor_id, entry.object_id) == ("like", fan["id"], pin["id"])
    assert "pinboard.notifications.tasks.deliver" in worker.read_text()


def test_a_fan_out_whose_message_is_lost_is_sent_again_by_the_sweep(
    worker, worker_metrics, make_user
):
    """A message the broker lost (here: sent to a queue no worker reads) stays in the
    ledger; once due, the worker's sweep sends it again and the pin reaches the feeds."""
    owner, fan = make_user("owner"), make_user("fan")
    board = create_board(owner["id"], "Lost message board")
    follow_user(fan["id"], owner["id"])
    get_feeds().mark_seen(fan["id"])
    broker = redis.Redis.from_url(celery_app.conf.broker_url)
    before = set(broker.zrange(ledger.DUE, 0, -1))
    router = celery_app.amqp.router  # (made once: the setting is read no more)
    routes, router.routes = router.routes, prepare_routes({"pinboard.feeds.tasks.fan_out_pin": {"queue": "lost"}})  # fmt: skip
    try:
        with request_id.bound("lost-request"):  # as if queued by a request
            pin = create_pin(owner["id"], board["id"], image_upload(), "Its message is lost")
    finally:
        router.routes = routes
    written = {  # the fan-out's (the pin's search task is the worker's as usual)
        task_id
        for task_id in set(broker.zrange(ledger.DUE, 0, -1)) - before
        if json.loads(broker.hget(ledger.TASKS, task_id) or "{}").get("name")
        == "pinboard.feeds.tasks.fan_out_pin"
    }
    assert len(written) == 1 and broker.llen("lost") == 1
    time.sleep(1)
    assert pin["id"] not in [p for _, p in get_feeds().entries(fan["id"])]
    broker.zadd(ledger.DUE, dict.fromkeys(written, 0))  # due now
    deadline = time.monotonic() + 60
    while pin["id"] not in [p for _, p in get_feeds().entries(fan["id"])]:
        if time.monotonic() > deadline:
            pytest.fail("the sweep did not send the task again:\n" + worker.read_text()[-3000:])
        time.sleep(0.2)
    deadline = time.monotonic() + 30
    while broker.zcard(ledger.DUE) or broker.hlen(ledger.TASKS):  # every task crossed out
        assert time.monotonic() < deadline, broker.hgetall(ledger.TASKS)
        time.sleep(0.2)
    assert "sent again" in worker.read_text()
    # The task sent again carries the ID of the request that queued it (kept in the ledger).
    lines = [json.loads(line) for line in worker.read_text().splitlines() if line.startswith("{")]
    assert any(
        line.get("request_id") == "lost-request" and "fan_out_pin" in line["message"]
        for line in lines
    )
    assert scrape(f"http://{worker_metrics}/metrics").total("pinboard_ledger_resends_total") == 1
