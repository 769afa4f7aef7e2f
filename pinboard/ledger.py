"""At-least-once tasks on a Redis broker: written down before they are sent, crossed out
once they have run, sent again by a sweep while they stay written down.

kombu's Redis transport takes a message off its queue (``BRPOP``) before it writes it
into the hash of unacknowledged messages that the visibility timeout restores from. A
worker killed between the two (``kill -9``, the out-of-memory killer, a lost host) loses
that message for good, and a fan-out batch lost that way is a thousand home feeds
without the pin. So a ``Ledgered`` task also writes itself into a ledger on the broker's
Redis (``ledger:due``, when it must have run by; ``ledger:tasks``, how to send it again),
and crosses itself out when it returns, whether it succeeded or finally failed. Every
worker sweeps the ledger every ``SWEEP_SECONDS``: a task still written down when it is
due is sent again under the same ID, at most ``MAX_RESENDS`` times.

A task is due a grace period after it was sent: the visibility timeout plus the restore
interval (the broker brings back what a dead worker held by then) plus ``MARGIN``. A task
only slow to start (a queue longer than that) may run twice; every ledgered task is
idempotent. On the embedded default tasks run eagerly and there is no ledger.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from functools import cache
from typing import Any

import redis
from celery import Task, bootsteps, shared_task

from shardstore import ShardUnavailable, WriteConflict

from . import request_id
from .metrics import LEDGER_RESENDS

log = logging.getLogger(__name__)

DUE = "ledger:due"
TASKS = "ledger:tasks"
SENDS = "ledger:sends"
#: How often each worker sweeps the ledger.
SWEEP_SECONDS = 10.0
#: Beyond the broker's own redelivery, how long a task may take to be picked up and run.
MARGIN = 30.0
#: How many times one task is sent again before the ledger gives up on it.
MAX_RESENDS = 3
#: How many due tasks one sweep sends at most.
SWEEP_BATCH = 500

# KEYS: due, tasks, sends. ARGV: now, next due, batch, max resends. Takes the due tasks
# and puts their due time forward in one step, so two workers sweeping at once do not
# both send a task; returns [id, task, id, task, ...]; drops those sent too often.
_SWEEP = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, id in ipairs(ids) do
  local task = redis.call('HGET', KEYS[2], id)
  if task and redis.call('HINCRBY', KEYS[3], id, 1) <= tonumber(ARGV[4]) then
    redis.call('ZADD', KEYS[1], ARGV[2], id)
    table.insert(out, id)
    table.insert(out, task)
  else
    redis.call('ZREM', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
  end
end
return out
"""


class Ledgered(Task[Any, Any]):
    """A Celery task sent at least once, even by a broker that can lose a message."""

    def apply_async(  # type: ignore[override]  # the options pass through as they came
        self,
        args: Any = None,
        kwargs: Any = None,
        task_id: str | None = None,
        **options: Any,
    ) -> Any:
        client = _client(self.app)
        if client is not None:
            task_id = task_id or str(uuid.uuid4())
            due = time.time() + float(options.get("countdown") or 0) + grace(self.app)
            try:
                write(client, task_id, self.name, args, kwargs, due)
            except redis.RedisError as error:  # the broker is down: sending fails in its own way
                log.warning("task %s (%s) not written in the ledger: %s", task_id, self.name, error)
        return super().apply_async(args, kwargs, task_id=task_id, **options)

    def on_success(self, retval: Any, task_id: str, args: Any, kwargs: Any) -> None:
        cross_out(self.app, task_id)

    def on_failure(self, exc: Any, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        cross_out(self.app, task_id)


#: The errors a later try of a task can get past: a shard or Redis down or changing
#: hands, a lock conflict. A task that also writes files adds OSError.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    redis.RedisError,
    ShardUnavailable,
    WriteConflict,
)


def ledgered_task(
    *, retry_on: tuple[type[Exception], ...], reject_on_worker_lost: bool = False
) -> Callable[[Callable[..., Any]], Ledgered]:
    """A task sent at least once (``Ledgered``), acknowledged when done, and retried with a
    jittered backoff, up to ten times, on the errors a later try can get past."""
    return shared_task(
        base=Ledgered,
        acks_late=True,
        reject_on_worker_lost=reject_on_worker_lost,
        autoretry_for=retry_on,
        retry_backoff=True,
        retry_jitter=True,
        max_retries=10,
    )


def write(client: redis.Redis, task_id: str, name: str, args: Any, kwargs: Any, due: float) -> None:
    """Write the task down, with the ID of the request that queued it (a task sent again
    carries it on)."""
    task: dict[str, Any] = {"name": name, "args": list(args or ()), "kwargs": dict(kwargs or {})}
    if request_id.current() is not None:
        task["request_id"] = request_id.current()
    text = json.dumps(task)
    with client.pipeline(transaction=True) as pipe:
        pipe.hset(TASKS, task_id, text)
        pipe.zadd(DUE, {task_id: due})
        pipe.execute()


def cross_out(app: Any, task_id: str | None) -> None:
    client = _client(app)
    if client is None or not task_id:
        return
    try:
        with client.pipeline(transaction=True) as pipe:
            pipe.zrem(DUE, task_id)
            pipe.hdel(TASKS, task_id)
            pipe.hdel(SENDS, task_id)
            pipe.execute()
    except redis.RedisError as error:  # the task is sent again when due: it is idempotent
        log.warning("task %s not crossed out of the ledger: %s", task_id, error)


def sweep(app: Any, *, now: float | None = None) -> int:
    """Send again the ledgered tasks that are due and not crossed out; how many."""
    client = _client(app)
    if client is None:
        return 0
    now = time.time() if now is None else now
    taken = client.eval(
        _SWEEP, 3, DUE, TASKS, SENDS, now, now + grace(app), SWEEP_BATCH, MAX_RESENDS
    )
    for task_id, raw in zip(taken[::2], taken[1::2], strict=True):
        task = json.loads(raw)
        log.warning("task %s (%s) not done in time: sent again", task_id.decode(), task["name"])
        sent_for = task.get("request_id")
        headers = {request_id.TASK_HEADER: sent_for} if sent_for else None
        app.send_task(
            task["name"], task["args"], task["kwargs"], task_id=task_id.decode(), headers=headers
        )
        LEDGER_RESENDS.inc()
    return len(taken) // 2


def grace(app: Any) -> float:
    """How long after it was sent a task must have run: the broker's redelivery, plus
    ``MARGIN``."""
    options = app.conf.broker_transport_options or {}
    visibility = float(options.get("visibility_timeout", 3600))
    return visibility + float(options.get("unacked_restore_interval", 60)) + MARGIN


def _client(app: Any) -> redis.Redis | None:
    """The broker's Redis, when tasks go through one."""
    if app.conf.task_always_eager:
        return None
    return _redis(app.conf.broker_url or "")


@cache
def _redis(url: str) -> redis.Redis | None:
    return redis.Redis.from_url(url) if url.startswith(("redis://", "rediss://")) else None


class Sweep(bootsteps.StartStopStep):
    """The worker's ledger sweep, on its timer."""

    requires = ("celery.worker.components:Timer",)

    def __init__(self, worker: Any, **_: Any) -> None:
        self.timer_ref: Any = None

    def start(self, worker: Any) -> None:
        self.timer_ref = worker.timer.call_repeatedly(SWEEP_SECONDS, _sweep_safely, (worker.app,))

    def stop(self, worker: Any) -> None:
        if self.timer_ref is not None:
            self.timer_ref.cancel()


def _sweep_safely(app: Any) -> None:
    try:
        sweep(app)
    except redis.RedisError as error:  # the next sweep tries again
        log.warning("ledger sweep failed: %s", error)
