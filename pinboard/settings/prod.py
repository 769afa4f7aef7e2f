"""Production: MySQL shards from a topology file, secrets from the environment."""

import os

from .base import *  # noqa: F403

SECRET_KEY = os.environ["PINBOARD_SECRET_KEY"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
