"""Defaults shared by every mode."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("PINBOARD_VAR_DIR", BASE_DIR / "var"))

SECRET_KEY = os.environ.get("PINBOARD_SECRET_KEY", "embedded-default-not-secret")
DEBUG = False
ALLOWED_HOSTS = os.environ.get("PINBOARD_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
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

# The shard store. PINBOARD_TOPOLOGY names a topology JSON file; without it the
# embedded default puts all 4096 shards in SQLite files under var/shards/.
SHARDSTORE = {
    "TOPOLOGY_FILE": os.environ.get("PINBOARD_TOPOLOGY"),
    "EMBEDDED_DIR": VAR_DIR / "shards",
    "EMBEDDED_SHARDS": 4096,
    "BACKEND_OPTIONS": {},
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "collected-static"
MEDIA_URL = "media/"
MEDIA_ROOT = VAR_DIR / "media"
