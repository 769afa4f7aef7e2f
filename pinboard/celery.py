"""The Celery app: fan-out of new pins to home feeds, graph rebuild and repair jobs."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pinboard.settings.dev")

app = Celery("pinboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
