"""Operators' Celery tasks."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import DatabaseError

from ..ledger import Ledgered
from . import chunks
from .health import report


@shared_task
def config_report() -> dict[str, Any]:
    """What ``/readyz`` says, from a worker: which config versions it serves."""
    return report()


@shared_task(
    base=Ledgered,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(DatabaseError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=10,
)
def run_job_chunk(chunk_id: int) -> str:
    """One chunk of a long job (pinboard/ops/chunks.py): run unless done already.

    Acknowledged only once it returns, and put back on the queue if its worker
    process dies: a chunk is never lost with a worker; run again, it is harmless.
    The control database busy or away (its own errors; a chunk's are recorded on
    the chunk) is retried: the chunk must not be left unmarked.
    """
    return chunks.run(chunk_id)
