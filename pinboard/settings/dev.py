"""The embedded default: SQLite shards, local-memory caches, eager tasks. Zero setup."""

from .base import *  # noqa: F403
from .base import VAR_DIR
from .secret import embedded_key

DEBUG = True
SECRET_KEY = embedded_key(VAR_DIR)  # PINBOARD_SECRET_KEY, else var/secret_key made on first run
