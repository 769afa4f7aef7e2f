"""The Celery page: how deep the broker's queues are and what the workers are running.

On the embedded default tasks run eagerly in the web process: there is no
broker and no worker to ask. With Redis as the broker a queue is a list of
the queue's name, so its depth is one ``LLEN``; another broker (RabbitMQ) is
asked through kombu with a passive declare. Workers answer ``inspect
active()`` within a second, or are reported as not answering.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from celery import Celery

TIMEOUT = 1


@dataclass(frozen=True)
class QueueDepth:
    queue: str
    depth: int | None  # None: the broker did not answer
    error: str = ""


@dataclass
class CeleryView:
    eager: bool
    broker: str  # password masked
    queues: list[QueueDepth] = field(default_factory=list)
    workers: dict[str, list[dict[str, Any]]] | None = None  # None: no worker answered


def celery_view(app: Celery) -> CeleryView:
    from shardstore.control.documents import masked

    conf = app.conf
    if conf.task_always_eager:
        return CeleryView(eager=True, broker="eager (no broker): tasks run in the web process")
    url = str(conf.broker_url)
    queues = [queue.name for queue in conf.task_queues or ()] or [conf.task_default_queue]
    return CeleryView(
        eager=False,
        broker=masked(url),
        queues=[queue_depth(app, url, queue) for queue in queues],
        workers=running_tasks(app),
    )


def queue_depth(app: Celery, url: str, queue: str) -> QueueDepth:
    """How many messages wait in ``queue``."""
    if url.startswith(("redis://", "rediss://")):
        import redis

        client = redis.Redis.from_url(url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT)
        try:
            return QueueDepth(queue, int(client.llen(queue)))
        except redis.RedisError as exc:
            return QueueDepth(queue, None, str(exc))
        finally:
            client.close()
    try:
        with app.connection_for_read() as connection:
            connection.ensure_connection(max_retries=1, timeout=TIMEOUT)
            channel: Any = connection.default_channel  # kombu's StdChannel declares no queues
            declared = channel.queue_declare(queue, passive=True)
            return QueueDepth(queue, int(declared.message_count))
    except Exception as exc:  # noqa: BLE001 - an unreachable broker is shown, not raised
        return QueueDepth(queue, None, str(exc) or type(exc).__name__)


def running_tasks(app: Celery) -> dict[str, list[dict[str, Any]]] | None:
    """``{worker: [task, ...]}`` of the workers that answer within a second, or None."""
    try:
        active: dict[str, Any] | None = app.control.inspect(timeout=TIMEOUT).active()
    except Exception:  # noqa: BLE001 - a broker that is down: no worker can answer either
        return None
    return dict(active) if active else None
