"""Production: MySQL shards from a topology file, secrets from the environment.

Set PINBOARD_SECRET_KEY, PINBOARD_TOPOLOGY, PINBOARD_REDIS_URL (or
PINBOARD_REDIS_TOPOLOGY), PINBOARD_MEMCACHED (or one PINBOARD_MEMCACHED_<POOL>
per pool), PINBOARD_BROKER_URL, and PINBOARD_S3_BUCKET for pin images on S3.
"""

import os

from .base import *  # noqa: F403

SECRET_KEY = os.environ["PINBOARD_SECRET_KEY"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True

if os.environ.get("PINBOARD_S3_BUCKET"):
    STORAGES = {
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": os.environ["PINBOARD_S3_BUCKET"],
                "region_name": os.environ.get("PINBOARD_S3_REGION"),
                "custom_domain": os.environ.get("PINBOARD_MEDIA_DOMAIN"),  # e.g. CloudFront
                "querystring_auth": False,  # pin images are public
                "file_overwrite": False,
            },
        },
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
