"""Operators' Celery tasks."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import DatabaseError

from ..ledger import Ledgered
from . import chunks, signed_tasks
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


@shared_task(acks_late=False, ignore_result=True)
def run_action(token: str) -> int:
    """A console action its operator confirmed, run on a worker rather than in the web
    request (a recycled web worker must not cut an operation short; a killed Celery worker
    leaves the journal entry open for ``abort``/``resume``). ``token`` is the web view's
    request, signed (``signed_tasks.py``): the operator's role is checked again here, and
    the action planned again from the form's data runs only if it is still the plan the
    operator confirmed. Acknowledged when received, and a signed request runs once at most:
    an operation is never run twice by a redelivery. The journal entry's id."""
    from .console_actions import run_confirmed

    try:
        asked = signed_tasks.opened(token, signed_tasks.ACTION)
    except signed_tasks.Refused as refused:
        return refused.journaled()
    return run_confirmed(asked.name, asked.data, asked.operator, asked.digest)


@shared_task(acks_late=False, ignore_result=True)
def end_operation(token: str) -> str:
    """Abort, resume or close an operation its process left open (recovery.py), on a worker
    as every console action runs, from a signed request as ``run_action``'s. What was done,
    or why not."""
    from shardstore import ShardStoreError
    from shardstore.control.recovery import end

    from .console_actions import console_control

    try:
        asked = signed_tasks.opened(token, signed_tasks.ENDING)
    except signed_tasks.Refused as refused:
        refused.journaled()
        return f"FAILED: {refused.why}"
    operator = asked.operator
    with console_control(operator) as made:
        try:
            return end(
                asked.data["operation"],
                asked.name,
                source=made.source,
                journal=made.journal,
                locks=made.locks,
                operator=operator,
                connect=made.mysql,
                fence=made.fence,
            )
        except ShardStoreError as error:
            return f"FAILED: {error}"
