"""The local cluster's backups: the binary-log archiver (``archiver``: ``shardstore backup
archive``, as the deploy's workers run it) and the schedule (``backups``), one process that
does what the deploy's timers do on its hosts, since every host of the cluster is this
machine (Puppet: ``backup take HOST --replica-only --if-due`` on each shard host,
``backup verify --all`` daily on the workers):

every ``CHECK`` seconds, each range due a backup (its newest is a day old, one was asked
for: ``backup request``, the console's *Back up now*, or it has none: a new range, once it
has been in the map ``NEW_RANGE_AFTER`` seconds, as a timer's next run would find it) gets
one from its replica, and a range whose backup failed is tried again ``RETRY`` seconds
later; daily, the first time an hour after it starts, every range not verified well lately
is verified and the store is pruned to the retention. ``up`` waits for its first pass: a
new cluster has its backups.

    python -m toolkit.cluster.backup_schedule --topology zk://127.0.0.1:PORT/pinboard
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from shardstore.control import backup_records, documents
from shardstore.control.sources import open_source
from toolkit.processes import ServerStartError
from toolkit.site_processes import ROOT, SiteProcess

CHECK = 10.0
RETRY = 300.0
NEW_RANGE_AFTER = 600.0
EVERY_HOURS = 24.0
FIRST_VERIFY_AFTER = 3600.0
#: What the schedule prints once its first pass is done (``up`` waits for it).
READY = "backups: first pass done"


class CommandProcess(SiteProcess):
    """A long-running command of the project, ready once its log says ``ready_line``."""

    def __init__(self, argv: list[str], ready_line: str, env: dict[str, str], log: Path, *, detached: bool) -> None:  # fmt: skip
        super().__init__(argv, env, log, detached=detached)
        self.ready_line = ready_line

    def wait_ready(self, timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            said = self._output_since_start()
            if self.ready_line in said:
                return
            if not self.alive:
                raise ServerStartError(f"{self.argv[2:5]} exited:\n{said[-3000:]}")
            time.sleep(0.2)
        raise ServerStartError(f"{self.argv[2:5]} not ready in {timeout:g}s:\n{said[-3000:]}")


def archiver(directory: Path, env: dict[str, str], log: Path, *, detached: bool) -> CommandProcess:
    argv = [sys.executable, "manage.py", "shardstore", "backup", "archive", "--spool", str(directory / "archiver" / "spool"), "--instance", "cluster"]  # fmt: skip
    return CommandProcess(argv, " archives the masters' binary logs into ", env, log, detached=detached)  # fmt: skip


def schedule(topology: str, env: dict[str, str], log: Path, *, detached: bool) -> CommandProcess:
    argv = [sys.executable, "-m", "toolkit.cluster.backup_schedule", "--topology", topology]
    return CommandProcess(argv, READY, env, log, detached=detached)


def backup(*args: str) -> bool:
    """``manage.py shardstore backup ARGS`` (its output into this process's); whether it
    succeeded."""
    command = [sys.executable, "manage.py", "shardstore", "backup", *args]
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} backup {' '.join(args)}", flush=True)
    return subprocess.run(command, cwd=ROOT, check=False).returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.cluster.backup_schedule")
    parser.add_argument("--topology", required=True, help="the config source (zk://...)")
    parser.add_argument("--every", type=float, default=EVERY_HOURS, help="hours between backups of a range")  # fmt: skip
    args = parser.parse_args(argv)
    source = open_source(args.topology)
    every = args.every * 3600
    failed: dict[str, float] = {}  # range -> when its backup last failed
    seen: dict[str, float] = {}  # range -> when this process first saw it in the map
    next_check = time.time() + FIRST_VERIFY_AFTER
    first = True
    while True:
        now = time.time()
        records = backup_records.status(source)
        for entry in source.current(documents.SHARDS).document["ranges"]:
            span = f"{entry['range'][0]}-{entry['range'][1]}"
            new = span not in records.taken and now - seen.setdefault(span, now) < NEW_RANGE_AFTER
            if not records.due(span, every, now) or (new and not first):
                continue
            if now - failed.get(span, 0.0) > RETRY and not backup("take", span, "--if-due", f"{args.every:g}"):  # fmt: skip
                failed[span] = time.time()
        if first or now >= next_check:
            if now >= next_check:
                backup("verify", "--all")
                next_check = now + every
            backup("prune")
        if first:
            print(READY, flush=True)
            first = False
        time.sleep(CHECK)


if __name__ == "__main__":
    sys.exit(main())
