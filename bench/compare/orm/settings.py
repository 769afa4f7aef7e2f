"""Production-shaped settings: one MySQL database with persistent connections, DEBUG off,
startproject's middleware, no cache framework.

``COMPARE_ORM_DATABASE`` is ``mysql://user:password@host:port/name``;
``COMPARE_ORM_SECRET_KEY`` is the secret key (else a random one per process: the pages
served are signed out, so nothing signed has to outlive the process).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

ROOT = Path(__file__).resolve().parents[3]


def database_from_url(url: str | None) -> dict[str, object]:
    """Django's DATABASES entry for ``mysql://user:password@host:port/name``."""
    parts = urlsplit(url or "")
    name = parts.path.strip("/")
    if parts.scheme != "mysql" or not parts.hostname or not name:
        raise ImproperlyConfigured(
            "COMPARE_ORM_DATABASE must look like mysql://user:password@host:port/name"
        )
    return {
        "ENGINE": "django.db.backends.mysql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname,
        "PORT": parts.port or 3306,
        "CONN_MAX_AGE": None,  # one connection per thread, kept for its life
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {"charset": "utf8mb4"},
    }


DATABASES = {"default": database_from_url(os.environ.get("COMPARE_ORM_DATABASE"))}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

SECRET_KEY = os.environ.get("COMPARE_ORM_SECRET_KEY") or secrets.token_urlsafe(48)
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "bench.compare.orm",
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

ROOT_URLCONF = "bench.compare.orm.urls"
WSGI_APPLICATION = "bench.compare.orm.wsgi.application"

# pinboard's own templates, so both builds send the same HTML for the same data. The pages
# are signed out: the templates find no ``pinner`` and show the signed-out buttons.
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [ROOT / "templates"],
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# The same URLs as pinboard's: pin images under /media/, pages' assets under /static/.
STATIC_URL = "static/"
MEDIA_URL = "media/"
