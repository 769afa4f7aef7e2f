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

import logging
import traceback
from typing import Any

from celery import group
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError

from shardstore import jobs as kinds_of_jobs
from shardstore.control.mysql_hosts import admin
from shardstore.jobs import Chunk, JobContext, JobError, JobKind, Summary

from ..store import get_graph, get_store
from .models import Job, JobChunk

log = logging.getLogger(__name__)

#: How much of a failed chunk's traceback is kept.
MAX_ERROR = 8000


def kinds() -> dict[str, JobKind]:
    """Every kind of job: the library's, and those of ``settings.JOB_KIND_MODULES``."""
    kinds_of_jobs.load(settings.JOB_KIND_MODULES)
    return kinds_of_jobs.kinds()


def kind(name: str) -> JobKind:
    kinds()
    return kinds_of_jobs.kind(name)


def context() -> JobContext:
    """What chunks run against: this process's store (with its caches) and follower graph."""
    return JobContext(get_store(), get_graph, mysql=admin(settings.SHARDSTORE.get("MYSQL_ADMIN")))


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
    from .tasks import run_job_chunk

    if not chunk_ids:
        return
    try:
        group(run_job_chunk.si(pk) for pk in chunk_ids).apply_async()
    except OperationalError as exc:  # the broker is down: the chunks wait for a resume
        raise JobError(f"its chunks could not be queued ({exc})") from exc


# -- one chunk ---------------------------------------------------------------------------


def run(chunk_id: int) -> str:
    """Run one chunk, unless it is done already; returns what happened (for the worker's log)."""
    chunk = claim(chunk_id)
    if chunk is None:
        return "skipped: done already (or no such chunk)"
    job = chunk.job
    try:
        summary = kind(job.kind).run_chunk(
            context(), Chunk(chunk.first_shard, chunk.last_shard), job.params
        )
    except Exception as exc:  # whatever stops a chunk is the operator's to see
        log.exception("job %s chunk %s (shards %s) failed", job.pk, chunk.index, chunk.shards)
        fail(chunk, error_text(exc))
        return f"failed: {type(exc).__name__}: {exc}"
    finish(chunk, summary)
    return f"done: {summary}"


def claim(chunk_id: int) -> JobChunk | None:
    """Mark the chunk running (one more attempt); None if it is done or does not exist."""
    now = timezone.now()
    started = {"state": JobChunk.RUNNING, "attempts": F("attempts") + 1, "started_at": now}
    with transaction.atomic():
        chunks = JobChunk.objects.filter(pk=chunk_id)
        claimed = chunks.filter(state__in=[JobChunk.PENDING, JobChunk.RUNNING]).update(**started)
        was_failed = chunks.filter(state=JobChunk.FAILED).update(**started)  # a stale delivery
        if not claimed and not was_failed:
            return None
        chunk = JobChunk.objects.select_related("job").get(pk=chunk_id)
        if was_failed:
            Job.objects.filter(pk=chunk.job_id).update(
                state=Job.RUNNING, failed=F("failed") - 1, finished_at=None, updated_at=now
            )
    return chunk


def finish(chunk: JobChunk, summary: Summary) -> None:
    """Mark the chunk done with its summary and count it on its job, at most once."""
    now = timezone.now()
    done = {"state": JobChunk.DONE, "result": summary, "error": "", "finished_at": now}
    with transaction.atomic():
        chunks = JobChunk.objects.filter(pk=chunk.pk)
        ran = chunks.filter(state__in=[JobChunk.PENDING, JobChunk.RUNNING]).update(**done)
        was_failed = chunks.filter(state=JobChunk.FAILED).update(**done)
        if ran or was_failed:
            counted: dict[str, Any] = {"done": F("done") + 1, "updated_at": now}
            if was_failed:  # a late run finished it after another failed: unsettle the job
                counted |= {"failed": F("failed") - 1, "state": Job.RUNNING, "finished_at": None}
            Job.objects.filter(pk=chunk.job_id).update(**counted)
            _settle(chunk.job_id, now)


def fail(chunk: JobChunk, error: str) -> None:
    """Record the chunk's failure (unless another run of it finished it meanwhile)."""
    now = timezone.now()
    failed = {"state": JobChunk.FAILED, "error": error, "finished_at": now}
    with transaction.atomic():
        chunks = JobChunk.objects.filter(pk=chunk.pk)
        if chunks.filter(state__in=[JobChunk.PENDING, JobChunk.RUNNING]).update(**failed):
            Job.objects.filter(pk=chunk.job_id).update(failed=F("failed") + 1, updated_at=now)
            _settle(chunk.job_id, now)
        else:
            chunks.filter(state=JobChunk.FAILED).update(error=error, finished_at=now)


def _settle(job_id: int, now: Any) -> None:
    """Once every chunk is done or failed, the job is done, or finished with failures."""
    running = Job.objects.filter(pk=job_id, state=Job.RUNNING)
    running.filter(done=F("total")).update(state=Job.DONE, finished_at=now)
    running.filter(failed__gt=0, done=F("total") - F("failed")).update(
        state=Job.FAILED, finished_at=now
    )


def error_text(exc: BaseException) -> str:
    """The error on its first line, then the end of its traceback."""
    summary = "".join(traceback.format_exception_only(exc)).strip()
    trace = "".join(traceback.format_exception(exc))
    return f"{summary}\n\n{trace[-MAX_ERROR:]}"


# -- what the console and the command line show -------------------------------------------


def totals(job: Job) -> dict[str, int]:
    """The sum of the summaries of the job's finished chunks."""
    summed: dict[str, int] = {}
    for result in job.chunks.filter(state=JobChunk.DONE).values_list("result", flat=True):
        for name, value in (result or {}).items():
            if isinstance(value, int):
                summed[name] = summed.get(name, 0) + value
    return summed
