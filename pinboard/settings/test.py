"""The test suite: a small embedded store in a temporary directory per run."""

import atexit
import shutil
import tempfile
from pathlib import Path

from .base import *  # noqa: F403
from .base import SHARDSTORE
from .secret import new_key

_TMP = Path(tempfile.mkdtemp(prefix="pinboard-test-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)

SECRET_KEY = new_key()  # a fresh one per run: no key is written in the repository

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
SHARDSTORE = {
    **SHARDSTORE,
    "CONFIG_DIR": _TMP / "config",
    "MIRROR_DIR": _TMP / "config-mirror",
    "EMBEDDED_DIR": _TMP / "shards",
    "EMBEDDED_SHARDS": 16,
}
MEDIA_ROOT = _TMP / "media"
SEARCH_URL = f"sqlite://{_TMP / 'search.sqlite3'}"
# Fast; tests only. The tests of the hashing itself use base.PASSWORD_HASHERS (Argon2).
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
RATE_LIMITS = {
    "login": (10_000, 60),
    "login_failures": (10_000, 60),
    "login_account": (10_000, 60),
    "signup": (10_000, 60),
    "pin": (10_000, 60),
    "avatar": (10_000, 60),
    "write": (1_000_000, 60),
    "write_address": (1_000_000, 60),
    "search": (1_000_000, 60),
    "search_address": (1_000_000, 60),
    "invite": (10_000, 60),
}  # tests that check limits override these
