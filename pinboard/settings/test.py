"""The test suite: a small embedded store in a temporary directory per run."""

import tempfile
from pathlib import Path

from .base import *  # noqa: F403
from .base import SHARDSTORE

_TMP = Path(tempfile.mkdtemp(prefix="pinboard-test-"))

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
SHARDSTORE = {**SHARDSTORE, "EMBEDDED_DIR": _TMP / "shards", "EMBEDDED_SHARDS": 16}
MEDIA_ROOT = _TMP / "media"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast; tests only
RATE_LIMITS = {
    "login": (10_000, 60),
    "signup": (10_000, 60),
    "pin": (10_000, 60),
}  # tests that check limits override these
