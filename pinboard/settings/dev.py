"""The embedded default: SQLite shards, local-memory caches, eager tasks. Zero setup."""

from .base import *  # noqa: F403

DEBUG = True
