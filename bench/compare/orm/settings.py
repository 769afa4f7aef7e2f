"""Production-shaped settings: one MySQL database with persistent connections, DEBUG off,
Django's middleware, no cache framework.

``COMPARE_ORM_DATABASE`` is ``mysql://user:password@host:port/name``;
``COMPARE_ORM_SECRET_KEY`` is the secret key (else a random one per process: the pages
served are signed out, so nothing signed has to outlive the process).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from pinboard.settings.base import MIDDLEWARE as SITE_MIDDLEWARE
from pinboard.settings.base import control_database

ROOT = Path(__file__).resolve().parents[3]

if not os.environ.get("COMPARE_ORM_DATABASE"):
    raise ImproperlyConfigured("COMPARE_ORM_DATABASE must name the build's MySQL database")
# pinboard's parsing of a mysql:// URL; one connection per thread, kept for its life. No
# health check: it would cost a round trip (a ping) at every request, and a connection
# that broke fails one request and is replaced at its end anyway.
DATABASES = {
    "default": {
        **control_database(os.environ["COMPARE_ORM_DATABASE"]),
        "CONN_MAX_AGE": None,
        "CONN_HEALTH_CHECKS": False,
    }
}
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

# Django's middleware, as pinboard runs it, less pinboard's own (its data plane, its CSP).
MIDDLEWARE = [name for name in SITE_MIDDLEWARE if name.startswith("django.")]

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
            # The libraries the templates load, drawn from this build's models.
            "libraries": {"avatars": "bench.compare.orm.avatars"},
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
