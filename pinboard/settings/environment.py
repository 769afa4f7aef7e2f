"""The one place the site reads its environment: every ``PINBOARD_*`` variable, once.

Settings modules take their values from here; the README's table documents each one.
Nothing here imports Django, so a check of the environment can run before it starts.
(gunicorn.conf.py reads its own ``PINBOARD_GUNICORN_*``, for the process that hosts the site.)
"""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def _text(name: str) -> str | None:
    """The variable's value, or None where it is unset or empty."""
    return os.environ.get(name) or None


def _whole_number(name: str, default: int) -> int:
    value = (os.environ.get(name) or "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{name} must be a positive whole number, not {value!r}")
    return int(value)


def _list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in (os.environ.get(name) or default).split(",") if item.strip()]


def _choice(name: str, choices: tuple[str, ...]) -> str | None:
    """One of ``choices`` (case aside), or None where the variable is unset or empty."""
    value = (os.environ.get(name) or "").strip().lower()
    if value and value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value or None


def _rate_limits(name: str) -> dict[str, tuple[int, int]]:
    """``scope=count/seconds,...``: rate limits that replace the defaults' (settings.base)."""
    limits = {}
    for item in _list(name):
        scope, _, limit = item.partition("=")
        count, _, seconds = limit.partition("/")
        if not (scope.strip() and count.strip().isdigit() and seconds.strip().isdigit()):
            raise ValueError(f"{name}: expected scope=count/seconds, not {item!r}")
        limits[scope.strip()] = (int(count), int(seconds))
    return limits


#: Where the embedded default keeps its control database, shards, media and config copy.
VAR_DIR = Path(_text("PINBOARD_VAR_DIR") or BASE_DIR / "var")
SECRET_KEY = _text("PINBOARD_SECRET_KEY")
ALLOWED_HOSTS = _list("PINBOARD_ALLOWED_HOSTS", "127.0.0.1,localhost")
CONTROL_DATABASE = _text("PINBOARD_CONTROL_DATABASE")
API_TOKEN_SECONDS = _whole_number("PINBOARD_API_TOKEN_SECONDS", 30 * 24 * 3600)
#: How long the API keeps an Idempotency-Key's answer (pinboard/api/idempotency.py).
IDEMPOTENCY_KEY_SECONDS = _whole_number("PINBOARD_IDEMPOTENCY_KEY_SECONDS", 24 * 3600)
RATE_LIMITS = _rate_limits("PINBOARD_RATE_LIMITS")
#: The logs' format (pinboard/logs.py); unset, each settings module has its default.
LOG_FORMAT = _choice("PINBOARD_LOG_FORMAT", ("json", "text"))

# The data plane.
TOPOLOGY = _text("PINBOARD_TOPOLOGY")
MYSQL_LOGIN = _text("PINBOARD_MYSQL_LOGIN")
#: How many of a process's threads one shard host may hold at once (the bulkhead,
#: shardstore/backends/bulkhead.py): half of gunicorn's, so a host that hangs leaves the rest.
HOST_SESSIONS = _whole_number(
    "PINBOARD_HOST_SESSIONS", max(1, _whole_number("PINBOARD_GUNICORN_THREADS", 4) // 2)
)
MYSQL_ADMIN = _text("PINBOARD_MYSQL_ADMIN")
FENCE_COMMAND = _text("PINBOARD_FENCE_COMMAND")
PROVISION_COMMAND = _text("PINBOARD_PROVISION_COMMAND")
BACKUP_STORE = _text("PINBOARD_BACKUP_STORE")
BACKUP_KMS_KEY = _text("PINBOARD_BACKUP_KMS_KEY")
MYSQL_REPLICATION = _text("PINBOARD_MYSQL_REPLICATION")
REDIS_URL = _text("PINBOARD_REDIS_URL")
REDIS_TOPOLOGY = _text("PINBOARD_REDIS_TOPOLOGY")
#: Pinners' sessions and rate-limit counts (settings.base falls back on REDIS_URL).
SESSIONS_REDIS_URL = _text("PINBOARD_SESSIONS_REDIS_URL")


def memcached(pool: str) -> list[str]:
    """A cache pool's memcached servers: ``PINBOARD_MEMCACHED_<POOL>``, else ``PINBOARD_MEMCACHED``
    ("host:port,host:port"); none means process memory."""
    return _list(f"PINBOARD_MEMCACHED_{pool.upper()}") or _list("PINBOARD_MEMCACHED")


#: How long a cache fill lives at most: a day (memcached takes 30 days at most).
CACHE_FILL_SECONDS = _whole_number("PINBOARD_CACHE_FILL_SECONDS", 24 * 3600)
if CACHE_FILL_SECONDS > 30 * 24 * 3600:
    raise ValueError(
        f"PINBOARD_CACHE_FILL_SECONDS must be 30 days or less, not {CACHE_FILL_SECONDS}"
    )


# The search index (pinboard/search/): sqlite://PATH or mysql://user:password@host:port/name.
SEARCH_URL = _text("PINBOARD_SEARCH_URL")

# Tasks.
BROKER_URL = _text("PINBOARD_BROKER_URL")
BROKER_VISIBILITY_TIMEOUT = _whole_number("PINBOARD_BROKER_VISIBILITY_TIMEOUT", 1200)
JOB_MODULES = _list("PINBOARD_JOB_MODULES")

# Prometheus metrics (pinboard/metrics.py): host:port of a worker's /metrics.
METRICS_BIND = _text("PINBOARD_METRICS_BIND")
if METRICS_BIND is not None and not METRICS_BIND.rpartition(":")[2].isdigit():
    raise ValueError(f"PINBOARD_METRICS_BIND must be host:port, not {METRICS_BIND!r}")

# The console's charts: the Prometheus that scrapes this deployment (http://host:port).
PROMETHEUS_URL = _text("PINBOARD_PROMETHEUS_URL")
if PROMETHEUS_URL is not None and not PROMETHEUS_URL.startswith(("http://", "https://")):
    raise ValueError(f"PINBOARD_PROMETHEUS_URL must be an http(s) URL, not {PROMETHEUS_URL!r}")

# Pin images on S3 (production).
S3_BUCKET = _text("PINBOARD_S3_BUCKET")
S3_REGION = _text("PINBOARD_S3_REGION")
MEDIA_DOMAIN = _text("PINBOARD_MEDIA_DOMAIN")
