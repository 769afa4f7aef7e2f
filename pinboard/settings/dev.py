"""The embedded default: SQLite shards, local-memory caches, eager tasks. Zero setup."""

from . import environment
from .base import *  # noqa: F403
from .secret import KEY_FILE_NAME, key_file

DEBUG = True
# PINBOARD_SECRET_KEY, else this install's key, made on first run.
SECRET_KEY = environment.SECRET_KEY or key_file(environment.VAR_DIR / KEY_FILE_NAME)
