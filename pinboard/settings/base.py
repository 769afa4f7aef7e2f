"""Defaults shared by every mode."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from pinboard.catalog import CACHE_POOLS
from pinboard.logs import logging_config

from ..cache_backend import redis_cache
from . import environment
from .environment import BASE_DIR, VAR_DIR

VAR_DIR.mkdir(parents=True, exist_ok=True)  # the embedded store's home: control DB, shards, media

# SECRET_KEY: each mode sets its own (pinboard/settings/secret.py).
DEBUG = False
ALLOWED_HOSTS = environment.ALLOWED_HOSTS

INSTALLED_APPS = [
    "pinboard.ops.admin_app.OpsAdminConfig",  # django.contrib.admin: operators only
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "pinboard.users",
    "pinboard.boards",
    "pinboard.pins",
    "pinboard.likes",
    "pinboard.follows",
    "pinboard.feeds",
    "pinboard.notifications",
    "pinboard.search",
    "pinboard.api",
    "pinboard.ops",
    "csp",
]

MIDDLEWARE = [
    "pinboard.request_log.RequestLogMiddleware",  # the request's ID, its access-log line
    "pinboard.metrics.MetricsMiddleware",  # every request counted and timed, by route
    "pinboard.plane_middleware.DataPlaneMiddleware",  # one version of the config per request
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "pinboard.users.auth.PinnerMiddleware",  # request.pinner, read from the session if asked
    "pinboard.http_errors.ErrorResponseMiddleware",  # what a view raises, as a page or JSON
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "pinboard.content_policy.ContentSecurityPolicyMiddleware",  # django-csp's policy, built once
    "pinboard.ratelimit.RateLimitMiddleware",  # every write and search, before its view
]

# Logs: one line a record on standard error, JSON or plain text, each carrying the ID of
# the request (or task) it was logged for (pinboard/logs.py). Plain text unless
# PINBOARD_LOG_FORMAT says otherwise; production's default is JSON (settings/prod.py).
LOG_FORMAT = environment.LOG_FORMAT or "text"
LOGGING = logging_config(LOG_FORMAT)

ROOT_URLCONF = "pinboard.urls"
WSGI_APPLICATION = "pinboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "pinboard.users.auth.context",
                "pinboard.notifications.context.unread",
            ],
        },
    },
]


def control_database(url: str | None) -> dict[str, object]:
    """The control database: SQLite under VAR_DIR (one host), or the MySQL database that
    PINBOARD_CONTROL_DATABASE names, ``mysql://user:password@host:port/name``, which every
    web and worker host of a fleet shares; ``?ssl_ca=/path/ca.pem`` connects over TLS,
    checking the server's certificate against that CA (RDS requires TLS)."""
    if not url:
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": VAR_DIR / "control.sqlite3"}
    parts = urlsplit(url)
    name = parts.path.strip("/")
    query = parse_qs(parts.query)
    if parts.scheme != "mysql" or not parts.hostname or not name or set(query) - {"ssl_ca"}:
        raise ImproperlyConfigured(
            "PINBOARD_CONTROL_DATABASE must look like"
            " mysql://user:password@host:port/name[?ssl_ca=/path/ca.pem]"
        )
    options: dict[str, object] = {"charset": "utf8mb4"}
    if "ssl_ca" in query:
        options["ssl"] = {"ca": query["ssl_ca"][0]}
    return {
        "ENGINE": "django.db.backends.mysql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname,
        "PORT": parts.port or 3306,
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": options,
    }


# The control plane: staff accounts, config history, audit log, long jobs. Pinner data
# never lives here; it lives in the shard store.
DATABASES = {"default": control_database(environment.CONTROL_DATABASE)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Pinner sessions live on the server, so logging out (or changing the password) ends
# them: a copied cookie is dead afterwards. They are kept in their own cache, on Redis
# with its append-only file (PINBOARD_SESSIONS_REDIS_URL; process memory in the embedded
# default), rather than in the control database: every page reads its session, and a
# Redis get keeps the control plane off the request path; expiry is Redis's, with no
# table to sweep. A restart of Redis (or of any memcached) logs no one out.
SESSION_ENGINE = "pinboard.sessions"  # Django's cache sessions; see pinboard/sessions.py
SESSION_CACHE_ALIAS = "sessions"
SESSION_COOKIE_HTTPONLY = True
# Staff accounts (the console): a session ends this long after its log-in, and running
# an action that changes the topology asks for the password again after this long.
OPS_SESSION_SECONDS = 8 * 3600
OPS_REAUTH_SECONDS = 5 * 60
# A staff log-in must name its account exactly, whatever the control database's collation
# would match (pinboard/ops/reauth.py).
AUTHENTICATION_BACKENDS = ["pinboard.ops.reauth.ExactUsernameBackend"]

# New passwords are hashed with Argon2; older PBKDF2 hashes still verify and are
# re-hashed with Argon2 at the pinner's next log-in.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]

#: How long an API token stays valid (pinboard/users/tokens.py).
API_TOKEN_SECONDS = environment.API_TOKEN_SECONDS
#: How long a create sent again with its Idempotency-Key gets its first answer
#: (pinboard/api/idempotency.py).
IDEMPOTENCY_KEY_SECONDS = environment.IDEMPOTENCY_KEY_SECONDS

# HTTP hardening for every mode (production adds HTTPS-only: settings/prod.py).
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy on every response: scripts, styles and images from the site
# itself only (no inline script or style anywhere), nothing may frame it.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "connect-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    }
}


def _cache(name: str) -> dict[str, object]:
    """A Django cache on the sessions' Redis (``cache_backend.RedisCache``), else in local
    memory (one process only: the embedded default)."""
    url = environment.SESSIONS_REDIS_URL or environment.REDIS_URL
    if url:
        return redis_cache(url, name)
    # Django's default of 300 entries would evict live sessions and rate-limit counters.
    return {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": name,
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    }


# Django's caches: "ratelimit" counts attempts per client address, "sessions" holds
# pinners' sessions, both on the Redis PINBOARD_SESSIONS_REDIS_URL names (by default the
# follower graph's PINBOARD_REDIS_URL; keys apart under their prefixes). Django requires a
# "default"; nothing of the site's uses it, so it stays in process memory. (The shard
# store's cache pools are not Django caches: SHARDSTORE["CACHE_POOLS"] below.)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": _cache("ratelimit"),
    "sessions": _cache("sessions"),
}
# (attempts, seconds): log-in and sign-up per client address, pins (new and saved) and
# avatar uploads per pinner.
RATE_LIMITS = {  # (attempts, seconds) over a sliding window: pinboard/ratelimit.py
    "login": (60, 60),  # passwords tried, per address
    "login_failures": (10, 300),  # wrong ones, per account and address: refused past it
    "login_account": (10, 300),  # wrong ones at an account: past it, slowed (below)
    "signup": (60, 60),
    "pin": (30, 60),
    "avatar": (10, 60),
    "write": (120, 60),  # every write, per pinner...
    "write_address": (300, 60),  # ...and per address (a NAT holds many pinners)
    "search": (60, 60),
    "search_address": (120, 60),
    "invite": (30, 3600),  # collaborator invitations, per pinner
    **environment.RATE_LIMITS,  # a deployment's own (PINBOARD_RATE_LIMITS)
}

# An account whose wrong passwords passed login_account takes one try at a time, this many
# seconds apart, from the addresses that failed at it (pinboard/ratelimit.py).
LOGIN_SLOWED_SECONDS = 5

DATA_UPLOAD_MAX_MEMORY_SIZE = 11 * 1024 * 1024  # an image of up to 10 MB, plus the form

# Pins from a URL (pinboard/pins/fetch.py): the time a whole fetch may take (redirects and
# a page's image included), and whether loopback addresses may be fetched from; only the
# tests, which stand a local server in for the web, allow them.
PIN_FETCH_SECONDS = 10
PIN_FETCH_ALLOW_LOOPBACK = False

# The shard store's config: PINBOARD_TOPOLOGY names a config directory, a shard-map file
# or zk://host:port[,host:port]/root (pinboard/plane.py); without it the embedded default
# keeps its documents in var/config/ and all 4096 shards in SQLite files under var/shards/.
# Each process mirrors the documents to MIRROR_DIR and boots from there if ZooKeeper is down.
# The site logs in to MySQL hosts as PINBOARD_MYSQL_LOGIN (user:password) where the shard
# map's address of a host names no user (so the map in ZooKeeper holds no password).
# MYSQL_ADMIN (user:password) is how operations (failover, split) log in to MySQL hosts:
# the site's own user has no privilege that read_only lets through. MYSQL_REPLICATION
# (user:password) is the account a replica logs in to its source as, which holds
# REPLICATION SLAVE only: the operators' account is never kept in a replica's master.info.
# FENCE_COMMAND fences a master that cannot be reached before an emergency failover
# (shardstore/control/fencing.py). PROVISION_COMMAND makes a new MySQL server for the guard
# to replace a dead replica when the map has no spare (shardstore/control/replacement.py).
# BACKUP_STORE: where the backups and the binary-log archive are (file:///DIR or
# s3://BUCKET/PREFIX; shardstore/backups/), for the console's restores.
# CACHE_POOLS: the memcached servers of each of the store's cache pools (users, boards,
# pins, lists: see pinboard/catalog.py), each sized and watched on its own; none is process
# memory. A caches document in the config source, once published, takes their place.
# CACHE_FILL_SECONDS: how long a value read through to MySQL stays cached at most (a day),
# so that one cached by a stale shard map, or whose invalidation was lost, dies by itself.
SHARDSTORE: dict[str, Any] = {
    "CONFIG": environment.TOPOLOGY,
    "CONFIG_DIR": VAR_DIR / "config",
    "MIRROR_DIR": VAR_DIR / "config-mirror",
    "EMBEDDED_DIR": VAR_DIR / "shards",
    "EMBEDDED_SHARDS": 4096,
    "BACKEND_OPTIONS": {
        "max_sessions": environment.HOST_SESSIONS,
        **({"mysql_login": environment.MYSQL_LOGIN} if environment.MYSQL_LOGIN else {}),
    },
    "MYSQL_ADMIN": environment.MYSQL_ADMIN,
    "FENCE_COMMAND": environment.FENCE_COMMAND,
    "PROVISION_COMMAND": environment.PROVISION_COMMAND,
    "BACKUP_STORE": environment.BACKUP_STORE,
    "BACKUP_KMS_KEY": environment.BACKUP_KMS_KEY,
    "MYSQL_REPLICATION": environment.MYSQL_REPLICATION,
    "CACHE_POOLS": {pool: environment.memcached(pool) for pool in CACHE_POOLS},
    "CACHE_FILL_SECONDS": environment.CACHE_FILL_SECONDS,
}

# The search index (pinboard/search/index.py): SQLite FTS5 in a file beside the embedded
# shards, or InnoDB FULLTEXT in a MySQL database of its own (PINBOARD_SEARCH_URL,
# mysql://user:password@host:port/name[?ssl_ca=/path/ca.pem]).
SEARCH_URL = environment.SEARCH_URL or f"sqlite://{VAR_DIR / 'search.sqlite3'}"

# The follower graph and home feeds: one Redis instance (PINBOARD_REDIS_URL), or a
# virtual-shard map over several (PINBOARD_REDIS_TOPOLOGY, a JSON file). The embedded
# default is an in-process Redis.
FOLLOWER_REDIS: dict[str, Any] = {
    "TOPOLOGY_FILE": environment.REDIS_TOPOLOGY,
    "URL": environment.REDIS_URL or "memory://pinboard",
}

# Where a process group serves its Prometheus metrics (pinboard/metrics.py): a Celery
# worker reads it here, gunicorn in gunicorn.conf.py. Unset: not served.
METRICS_BIND = environment.METRICS_BIND
# The Prometheus the console's overview draws its last hour of figures from (none: no charts).
PROMETHEUS_URL = (environment.PROMETHEUS_URL or "").rstrip("/") or None

# Celery: a real broker when PINBOARD_BROKER_URL is set (Redis or RabbitMQ), else tasks
# run eagerly in the calling process.
CELERY_BROKER_URL = environment.BROKER_URL or "memory://"
CELERY_TASK_ALWAYS_EAGER = environment.BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True  # a task a worker dies in is delivered again
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_BACKEND = None
# With acks_late, a Redis broker keeps each task a worker has taken until the worker
# acknowledges it (when the task returns). If the worker dies without a word (kill -9,
# out of memory, a lost host), the task goes back on the queue once it has been out for
# the visibility timeout; a worker looks for such tasks every `unacked_restore_interval`
# seconds, so a task is running again at most timeout + interval after its worker died.
# The timeout must outlast the longest a task is held before it returns, or a task still
# running would be handed to a second worker: a fan-out batch waits up to 600 s for a
# retry (Celery's retry_backoff_max) and a long job's chunk (one shard) takes seconds to
# minutes, so 20 minutes. (RabbitMQ redelivers as soon as the worker's connection drops.)
# A message Redis handed to a worker that died before writing it down as held is not
# restored at all: pinboard/ledger.py sends such tasks again.
BROKER_VISIBILITY_TIMEOUT = environment.BROKER_VISIBILITY_TIMEOUT
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
    "unacked_restore_interval": min(10, BROKER_VISIBILITY_TIMEOUT),
    "unacked_restore_throttle": 1,  # look every interval (kombu's default: every tenth)
}
# Long jobs' chunks wait on a queue of their own: a worker takes from both queues in
# turn, so the thousands of chunks of a job do not hold up fan-out to home feeds (a
# worker started with `-Q jobs` or `-Q celery` serves one kind only).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = [Queue("celery"), Queue("jobs")]
CELERY_TASK_ROUTES = {"pinboard.ops.tasks.run_job_chunk": {"queue": "jobs"}}
# Modules that register more kinds of long job (shardstore/jobs.py): the social model's
# (graph and feed rebuilds), the site's own, and those named in the environment,
# comma-separated.
JOB_KIND_MODULES = [
    "social.jobs",
    "pinboard.pins.backfill",
    "pinboard.likes.backfill",
    *environment.JOB_MODULES,
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "collected-static"
MEDIA_URL = "media/"
MEDIA_ROOT = VAR_DIR / "media"
