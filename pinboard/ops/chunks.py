"""One chunk of a long job, as a worker runs it: claim it, run it, record what happened.

A chunk already done is skipped, so a chunk delivered twice is not run twice; a chunk
is marked done in the same transaction that counts it on its job (pinboard/ops/jobs.py
says how the whole survives crashes).
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from shardstore.jobs import Chunk, Summary

from .job_kinds import context, kind
from .models import Job, JobChunk

log = logging.getLogger(__name__)

#: How much of a failed chunk's traceback is kept.
MAX_ERROR = 8000


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
