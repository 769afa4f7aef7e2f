"""A kind of long job for tests only: it writes each run of a chunk to a file, and can hold
a chosen shard's chunk while a flag file exists, or fail chosen shards' chunks.

Registered on import: the tests import it, and a worker or ``manage.py`` of a test imports
it through ``PINBOARD_JOB_MODULES=tests.site.job_kinds``.

Parameters: ``dir`` (where ``runs.log`` and the flag files live), ``block`` (a shard:
its chunk waits while ``dir/block`` exists, up to a minute), ``fail`` (shards whose chunks
raise while ``dir/fail`` exists).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from shardstore.jobs import Chunk, JobContext, JobKind, Params, Summary, register

WAIT_SECONDS = 60


def runs(directory: Path) -> list[tuple[str, int, int]]:
    """``(event, shard, pid)`` of every start and end of a chunk so far, in order."""
    log = directory / "runs.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [(event, int(shard), int(pid)) for event, shard, pid in (line.split() for line in lines)]


def _note(directory: Path, event: str, shard: int) -> None:
    with open(directory / "runs.log", "a") as log:  # one short append: whole lines
        log.write(f"{event} {shard} {os.getpid()}\n")


def _run(context: JobContext, chunk: Chunk, params: Params) -> Summary:
    directory = Path(params["dir"])
    _note(directory, "start", chunk.first)
    if chunk.first == params.get("block"):
        deadline = time.monotonic() + WAIT_SECONDS
        while (directory / "block").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    if chunk.first in params.get("fail", ()) and (directory / "fail").exists():
        raise RuntimeError(f"shard {chunk.first} refused")
    _note(directory, "done", chunk.first)
    return {"shards": len(chunk.shards)}


register(
    JobKind(
        "test-chunks",
        "Count runs of chunks in files (tests only)",
        _run,
        params={"dir": "a directory", "block": "a shard", "fail": "a list of shards"},
    )
)
