"""Operators' Celery tasks."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from .health import report


@shared_task
def config_report() -> dict[str, Any]:
    """What ``/healthz`` says, from a worker: which config versions it serves."""
    return report()
