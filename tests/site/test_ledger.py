"""The task ledger (pinboard/ledger.py) on a real Redis broker, without a worker: what a
ledgered task writes, what the sweep sends again and when, and when it gives up."""

from __future__ import annotations

import json
import time

import pytest
import redis
from celery import Celery
from celery import _state as celery_state

from pinboard import ledger

VISIBILITY = 100


@pytest.fixture
def app(redis_server):
    """A Celery app on database 14 of the test Redis, emptied first, with one ledgered
    task (never run here: the tests read the broker's queue)."""
    url = f"redis://{redis_server.host}:{redis_server.port}/14"
    client = redis.Redis.from_url(url)
    client.flushdb()
    current = celery_state.get_current_app()  # the site's, which this one must not replace
    app = Celery("ledger-test", broker=url, set_as_current=False)
    app.conf.broker_transport_options = {"visibility_timeout": VISIBILITY, "unacked_restore_interval": 5}  # fmt: skip

    @app.task(base=ledger.Ledgered, name="test.push", shared=False)
    def push(pin_id: int, *, batch: str) -> None:
        raise AssertionError("the tests run no worker")

    app.push = push
    app.client = client
    yield app
    app.close()
    current.set_current()


def queued(app) -> list[tuple[str, str]]:
    """The task IDs and arguments on the broker's default queue."""
    messages = [json.loads(raw) for raw in app.client.lrange("celery", 0, -1)]
    return [(m["headers"]["id"], m["headers"]["argsrepr"]) for m in messages]


def test_a_sent_task_is_written_down_due_after_the_brokers_redelivery(app):
    before = time.time()
    result = app.push.delay(7, batch="b")
    due = app.client.zscore(ledger.DUE, result.id)
    grace = VISIBILITY + 5 + ledger.MARGIN
    assert before + grace <= due <= time.time() + grace
    assert queued(app) == [(result.id, "(7,)")]
    later = app.push.apply_async((8,), {"batch": "c"}, countdown=50)
    assert app.client.zscore(ledger.DUE, later.id) >= before + grace + 50


def test_the_sweep_sends_again_only_what_is_due_and_not_crossed_out(app):
    lost, done, waiting = (app.push.delay(n, batch="b") for n in (1, 2, 3))
    app.client.delete("celery")  # the broker lost all three messages
    ledger.cross_out(app, done.id)  # one ran anyway
    app.client.zadd(ledger.DUE, {waiting.id: time.time() + 1000})
    now = time.time() + VISIBILITY + 5 + ledger.MARGIN + 1
    assert ledger.sweep(app, now=now) == 1
    assert queued(app) == [(lost.id, "[1]")]  # under its own ID: crossing out ends it
    # Sent again, it is due again a grace period later, not at the next sweep.
    assert ledger.sweep(app, now=now + 1) == 0
    assert app.client.zscore(ledger.DUE, lost.id) > now + VISIBILITY


def test_the_sweep_gives_up_after_max_resends(app):
    lost = app.push.delay(1, batch="b")
    app.client.delete("celery")
    sent = [ledger.sweep(app, now=time.time() + n * 1000) for n in range(1, ledger.MAX_RESENDS + 3)]
    assert sent == [1] * ledger.MAX_RESENDS + [0, 0]
    assert app.client.zscore(ledger.DUE, lost.id) is None
    assert app.client.hlen(ledger.TASKS) == 0


def test_no_ledger_when_tasks_run_eagerly(app):
    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    with pytest.raises(AssertionError, match="no worker"):
        app.push.delay(1, batch="b")
    assert app.client.zcard(ledger.DUE) == 0
    assert ledger.sweep(app) == 0
