"""``python manage.py shardstore job ...``: long jobs from the command line.

    job kinds                                  what each kind does, and its parameters
    job start KIND [--shards FIRST-LAST] [--per-chunk N] [--param NAME=VALUE ...] [--wait]
    job status ID [--wait] [--timeout SECONDS]
    job list [--limit N]
    job resume ID [--wait] [--timeout SECONDS]

``--wait`` follows the job until every chunk is done or failed: a progress bar on a
terminal, a ``done/total`` line at each change otherwise. Exit status: 0 when the job
is done (or, without ``--wait``, still running), 1 when chunks failed, when waiting
timed out, or for a job or kind that does not exist.

Jobs are rows of the site's control database, as the journal is, so these commands
belong to ``manage.py`` only: ``python -m shardstore`` (no Django) has none.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, TextIO

from shardstore.jobs import JobError

from . import job_kinds, jobs
from .models import Job, JobChunk

BAR = 30
POLL_SECONDS = 0.5
FAILED_SHOWN = 10


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="manage.py shardstore job", description=__doc__.split("\n\n")[0]
    )
    verbs = top.add_subparsers(dest="verb", required=True)
    verbs.add_parser("kinds", help="the kinds of job, and the parameters each takes")
    start = verbs.add_parser("start", help="cut a job into chunks by shard and queue them")
    start.add_argument("kind")
    start.add_argument("--shards", type=shard_range, help="FIRST-LAST (default: every shard)")
    start.add_argument("--per-chunk", type=int, help="shards per chunk (default 1)")
    start.add_argument(
        "--param", action="append", default=[], type=param, metavar="NAME=VALUE",
        help="a parameter of the kind (VALUE is JSON, or else a string)",
    )  # fmt: skip
    status = verbs.add_parser("status", help="how far a job got")
    status.add_argument("id", type=int)
    listing = verbs.add_parser("list", help="the latest jobs")
    listing.add_argument("--limit", type=int, default=20)
    resume = verbs.add_parser("resume", help="queue again every chunk of a job not done")
    resume.add_argument("id", type=int)
    for verb in (start, status, resume):
        verb.add_argument("--wait", action="store_true", help="follow it until it settles")
        verb.add_argument("--timeout", type=float, help="give up waiting after SECONDS")
    return top


def shard_range(text: str) -> list[int]:
    first, _, last = text.partition("-")
    try:
        return [int(first), int(last or first)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"shards: FIRST-LAST or one shard, not {text!r}") from None


def param(text: str) -> tuple[str, Any]:
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"NAME=VALUE, not {text!r}")
    try:
        return name, json.loads(raw)
    except ValueError:
        return name, raw


def main(argv: list[str], *, out: TextIO, operator: str) -> int:
    """Run a ``job`` command; returns the exit status."""
    args = parser().parse_args(argv)
    try:
        if args.verb == "kinds":
            for kind in job_kinds.kinds().values():
                out.write(f"{kind.name}: {kind.title}\n")
                for name, meaning in kind.params.items():
                    out.write(f"    --param {name}=...  {meaning}\n")
            return 0
        if args.verb == "list":
            for job in Job.objects.all()[: args.limit]:
                out.write(
                    f"{job.pk:>6}  {job.kind:<16} {job.done:>5}/{job.total:<5} {job.failed:>3} failed"
                    f"  {job.state:<8} {job.created_at:%Y-%m-%d %H:%M:%S} by {job.created_by}\n"
                )
            return 0
        if args.verb == "start":
            params = dict(args.param)
            if args.shards is not None:
                params["shards"] = args.shards
            if args.per_chunk is not None:
                params["per_chunk"] = args.per_chunk
            job = jobs.start(args.kind, params, created_by=operator)
            out.write(f"job {job.pk} started: {job.kind}, {job.total} chunks\n")
            job_id = job.pk
        else:
            job_id = args.id
            if not Job.objects.filter(pk=job_id).exists():
                raise JobError(f"no job {job_id}")
            if args.verb == "resume":
                out.write(f"job {job_id}: {jobs.resume(job_id)} chunks queued again\n")
    except JobError as exc:
        out.write(f"job: {exc}\n")
        return 1
    return watch(job_id, out, wait=args.wait, timeout=args.timeout)


def watch(job_id: int, out: TextIO, *, wait: bool, timeout: float | None) -> int:
    """Show the job's progress (until it settles, with ``wait``); the exit status."""
    show = Progress(out)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        job = Job.objects.get(pk=job_id)
        show(job)
        if job.state != Job.RUNNING or not wait:
            break
        if deadline is not None and time.monotonic() > deadline:
            show.end()
            out.write(f"job {job_id}: still running after {timeout:g}s\n")
            return 1
        time.sleep(POLL_SECONDS)
    show.end()
    summed = jobs.totals(job) if job.state != Job.RUNNING else {}
    if summed:
        out.write(
            f"job {job_id}: " + ", ".join(f"{k} {v}" for k, v in sorted(summed.items())) + "\n"
        )
    if job.state == Job.FAILED:
        failed = job.chunks.filter(state=JobChunk.FAILED)
        for chunk in failed[:FAILED_SHOWN]:
            out.write(f"  chunk {chunk.index} (shards {chunk.shards}): {chunk.error_line}\n")  # fmt: skip
        if job.failed > FAILED_SHOWN:
            out.write(f"  ... and {job.failed - FAILED_SHOWN} more\n")
        out.write(f"job {job_id}: {job.failed} chunks failed; `job resume {job_id}` runs them again\n")  # fmt: skip
        return 1
    return 0


class Progress:
    """A bar rewritten in place on a terminal; elsewhere a line each time the count moves."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        isatty = getattr(out, "isatty", None)
        self.tty = bool(isatty and isatty())
        self.last: tuple[int, int, str] | None = None

    def __call__(self, job: Job) -> None:
        now = (job.done, job.failed, job.state)
        if now == self.last:
            return
        self.last = now
        failed = f", {job.failed} failed" if job.failed else ""
        if self.tty:
            filled = BAR * job.done // job.total if job.total else BAR
            bar = "#" * filled + "-" * (BAR - filled)
            self.out.write(
                f"\rjob {job.pk} {job.kind} [{bar}] {job.done}/{job.total} {job.percent}%{failed}"
                f" ({job.state})\x1b[K"
            )
        else:
            self.out.write(
                f"job {job.pk} {job.kind}: {job.done}/{job.total} chunks done{failed} ({job.state})\n"
            )
        self.out.flush()

    def end(self) -> None:
        if self.tty and self.last is not None:
            self.out.write("\n")
            self.out.flush()
