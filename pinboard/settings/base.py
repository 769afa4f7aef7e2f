"""Defaults shared by every mode."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("PINBOARD_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)  # the embedded store's home: control DB, shards, media

SECRET_KEY = os.environ.get("PINBOARD_SECRET_KEY", "embedded-default-not-secret")
DEBUG = False
ALLOWED_HOSTS = os.environ.get("PINBOARD_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")

INSTALLED_APPS = [
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
    "pinboard.api",
    "pinboard.ops",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

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
            ],
        },
    },
]

# The control plane: staff accounts, config history, audit log. Pinner data
# never lives here; it lives in the shard store.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": VAR_DIR / "control.sqlite3",
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Pinner sessions hold only the pinner's ID: signed cookies, no session table.
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
SESSION_COOKIE_HTTPONLY = True


def _cache(name: str) -> dict[str, object]:
    """A cache pool: memcached servers from PINBOARD_MEMCACHED_<NAME> (or PINBOARD_MEMCACHED,
    "host:port,host:port"), else local memory (one process only: the embedded default)."""
    servers = os.environ.get(f"PINBOARD_MEMCACHED_{name.upper()}") or os.environ.get(
        "PINBOARD_MEMCACHED"
    )
    if servers:
        return {
            "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
            "LOCATION": servers.split(","),
            "KEY_PREFIX": name,
        }
    return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": name}


# One pool per kind of data (users, boards, pins, lists: see pinboard/store.py), each
# sized and watched on its own; "ratelimit" counts attempts per client address.
CACHES = {
    name: _cache(name) for name in ("default", "ratelimit", "users", "boards", "pins", "lists")
}
# (attempts, seconds): log-in and sign-up per client address, pins (new and saved) per pinner.
RATE_LIMITS = {
    "login": (60, 60),
    "signup": (60, 60),
    "pin": (30, 60),
}

DATA_UPLOAD_MAX_MEMORY_SIZE = 11 * 1024 * 1024  # an image of up to 10 MB, plus the form

# The shard store. PINBOARD_TOPOLOGY names a topology JSON file; without it the
# embedded default puts all 4096 shards in SQLite files under var/shards/.
SHARDSTORE = {
    "TOPOLOGY_FILE": os.environ.get("PINBOARD_TOPOLOGY"),
    "EMBEDDED_DIR": VAR_DIR / "shards",
    "EMBEDDED_SHARDS": 4096,
    "BACKEND_OPTIONS": {},
}

# The follower graph and home feeds: one Redis instance (PINBOARD_REDIS_URL), or a
# virtual-shard map over several (PINBOARD_REDIS_TOPOLOGY, a JSON file). The embedded
# default is an in-process Redis.
FOLLOWER_REDIS = {
    "TOPOLOGY_FILE": os.environ.get("PINBOARD_REDIS_TOPOLOGY"),
    "URL": os.environ.get("PINBOARD_REDIS_URL", "memory://pinboard"),
}

# Celery: a real broker when PINBOARD_BROKER_URL is set (Redis or RabbitMQ), else tasks
# run eagerly in the calling process.
CELERY_BROKER_URL = os.environ.get("PINBOARD_BROKER_URL", "memory://")
CELERY_TASK_ALWAYS_EAGER = "PINBOARD_BROKER_URL" not in os.environ
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True  # a task a worker dies in is delivered again
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_BACKEND = None

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "collected-static"
MEDIA_URL = "media/"
MEDIA_ROOT = VAR_DIR / "media"
