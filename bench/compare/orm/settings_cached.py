"""The plain ORM build's settings, with django-cacheops caching every read of its models in
Redis and invalidating what a write changes from Django's model signals (post_save,
post_delete: actions.py writes counts through ``save()``, so they send them too).

``COMPARE_ORM_REDIS`` is the Redis for the cache, ``redis://host:port/db``: a Redis of its
own, as cacheops recommends.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from .settings import *  # noqa: F403
from .settings import INSTALLED_APPS as PLAIN_APPS

if not os.environ.get("COMPARE_ORM_REDIS"):
    raise ImproperlyConfigured("COMPARE_ORM_REDIS must name the Redis of the build's cache")

INSTALLED_APPS = ["cacheops", *PLAIN_APPS]
CACHEOPS_REDIS = os.environ["COMPARE_ORM_REDIS"]
# Every operation (get, fetch, count, exists, aggregate) on every model of the build; an
# hour is longer than any run, so entries leave by invalidation, not by age.
CACHEOPS_DEFAULTS = {"timeout": 60 * 60}
CACHEOPS = {"orm.*": {"ops": "all"}}
