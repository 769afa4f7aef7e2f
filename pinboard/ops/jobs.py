"""Long jobs on Celery: a job's chunks are rows of the control database, each run by a task.

The kinds of job, and how each cuts its work by shard and runs a chunk, are the
library's (``shardstore/jobs.py``); here is what makes them survive crashes:

* starting a job writes the job and all its chunk rows in one transaction, then
  queues one ``run_job_chunk`` task per chunk, all in one go (a Celery group:
  one producer for thousands of messages);
* a chunk task is ``acks_late`` and ``reject_on_worker_lost``: the broker drops
  its message only once the task has returned, so a chunk whose worker dies (a
  ``kill -9``, a lost host) is delivered again (settings: the broker's
  visibility timeout bounds how long that takes);
* a task first claims its chunk, and a chunk already done is skipped: a chunk
  delivered twice, or queued again by hand, is not run again. A chunk that was
  running when its worker died is run again, which its kind makes harmless;
* a chunk is marked done, with its summary, in the same transaction that counts
  it on its job; a failure is recorded with its error, and the other chunks go on;
* ``resume`` queues again every chunk not done (failed, or lost with its message).

Every transaction here begins with a write, never a read: on the embedded
default's SQLite control database, a transaction that read first could not take
the write lock while another process's task held it (it would fail at once with
"database is locked" instead of waiting its turn).
"""

from __future__ import annotations

from typing import Any

from celery import group
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError

from shardstore.jobs import JobError

from .job_kinds import context, kind
from .models import Job, JobChunk
from .tasks import run_job_chunk


def start(kind_name: str, params: dict[str, Any], *, created_by: str) -> Job:
    """Make a job and its chunks, and queue them all. Call it outside any transaction: the
    chunks must be committed before a worker looks for them. Refuses bad parameters with
    ``shardstore.jobs.JobError``."""
    chosen = kind(kind_name)
    checked = chosen.check(params)
    chunks = chosen.chunks(context(), checked)
    with transaction.atomic():
        job = Job.objects.create(
            kind=chosen.name, params=checked, total=len(chunks), created_by=created_by
        )
        JobChunk.objects.bulk_create(
            [
                JobChunk(job=job, index=index, first_shard=chunk.first, last_shard=chunk.last)
                for index, chunk in enumerate(chunks)
            ],
            batch_size=500,
        )
        if not chunks:
            Job.objects.filter(pk=job.pk).update(state=Job.DONE, finished_at=timezone.now())
    try:
        enqueue(list(job.chunks.values_list("pk", flat=True)))
    except JobError as exc:
        raise JobError(
            f"job {job.pk} is made, but {exc}: `job resume {job.pk}` queues them"
        ) from exc
    job.refresh_from_db()
    return job


def resume(job_id: int) -> int:
    """Queue again every chunk of the job not done; returns how many."""
    now = timezone.now()
    with transaction.atomic():
        failed = JobChunk.objects.filter(job_id=job_id, state=JobChunk.FAILED).update(
            state=JobChunk.PENDING
        )
        Job.objects.filter(pk=job_id).exclude(state=Job.DONE).update(
            state=Job.RUNNING, failed=F("failed") - failed, finished_at=None, updated_at=now
        )
        chunk_ids = list(
            JobChunk.objects.filter(job_id=job_id)
            .exclude(state=JobChunk.DONE)
            .values_list("pk", flat=True)
        )
    try:
        enqueue(chunk_ids)
    except JobError as exc:
        raise JobError(f"job {job_id}: {exc}; resume it again once the broker is back") from exc
    return len(chunk_ids)


def enqueue(chunk_ids: list[int]) -> None:
    """One ``run_job_chunk`` task per chunk, sent together (eagerly run, without a broker)."""
    if not chunk_ids:
        return
    try:
        group(run_job_chunk.si(pk) for pk in chunk_ids).apply_async()
    except OperationalError as exc:  # the broker is down: the chunks wait for a resume
        raise JobError(f"its chunks could not be queued ({exc})") from exc


# -- what the console and the command line show -------------------------------------------


def totals(job: Job) -> dict[str, int]:
    """The sum of the summaries of the job's finished chunks."""
    summed: dict[str, int] = {}
    for result in job.chunks.filter(state=JobChunk.DONE).values_list("result", flat=True):
        for name, value in (result or {}).items():
            if isinstance(value, int):
                summed[name] = summed.get(name, 0) + value
    return summed
