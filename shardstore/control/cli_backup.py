"""``shardstore backup``: back a shard host up into a store (``take``), list the backups a
store holds (``list``), archive the masters' binary logs into it as they are written
(``archive``, until stopped: ``shardstore/backups/archiving.py``), list them (``logs``), or
restore a range's newest backup and compare it with its master (``verify``:
``backup_verify.py``), ask for a range's backup (``request``: taken at its timer's next
run, ``take --if-due``) or remove from a directory store what is past the retention
(``prune``: ``shardstore/backups/retention.py``). ``take`` names a host, or a range
(``FIRST-LAST``): then its first replica that answers and replicates (its master only with ``--master``), so a backup never
loads the host that takes the writes. It runs on the host's own machine (mariadb-backup
copies its data files: ``shardstore/backups/physical.py``)."""

from __future__ import annotations

import argparse
import socket
import time
from pathlib import Path
from typing import Any, TextIO

from ..backups.archiving import keep_archiving
from ..backups.binlogs import INTERVAL, archived
from ..backups.manifest import manifests
from ..backups.physical import take
from ..backups.retention import KEEP_DAYS, prune
from ..backups.store import BackupStore, DirectoryStore, open_store
from ..exceptions import InvalidTopology
from ..replicas import replicas_of
from . import backup_records, documents
from .backup_request import plan_backup_request
from .backup_verify import verify
from .cli_reports import shard_span
from .config_source import ConfigError
from .context import Control
from .mysql_hosts import HostError
from .plans import run


def add_parser(commands: Any) -> None:
    backup = commands.add_parser("backup", help="back a shard host up into a store, or list the backups")  # fmt: skip
    verbs = backup.add_subparsers(dest="verb", required=True)
    made = verbs.add_parser("take", help="a physical backup (mariadb-backup, zstd) of a host")
    made.add_argument("target", help="a host of the shard map, or a range FIRST-LAST (its replica)")  # fmt: skip
    made.add_argument("--master", action="store_true", help="with a range: back its master up")
    made.add_argument("--replica-only", action="store_true", help="with a host: only if it is a replica in service (a timer on every shard host)")  # fmt: skip
    made.add_argument("--if-due", type=float, metavar="HOURS", help="only if the range's newest backup is older than this or one was asked for, and from the replica a range's backup is taken from (a timer on every shard host, run often)")  # fmt: skip
    listed = verbs.add_parser("list", help="the finished backups, oldest first")
    listed.add_argument("--host", help="of this host only")
    archive = verbs.add_parser("archive", help="archive every master's binary logs as they are written, until stopped")  # fmt: skip
    archive.add_argument("--spool", required=True, type=Path, help="a directory of this machine for the logs being written")  # fmt: skip
    archive.add_argument("--instance", default=socket.gethostname(), help="this archiver's name")
    archive.add_argument("--interval", type=float, default=INTERVAL, help="seconds between passes")  # fmt: skip
    logs = verbs.add_parser("logs", help="the archived binary logs of a host")
    logs.add_argument("host")
    checked = verbs.add_parser("verify", help="restore a range's newest backup into a scratch server and compare it with its master")  # fmt: skip
    checked.add_argument("range", type=shard_span, nargs="?", help="FIRST-LAST, as in the map")
    checked.add_argument("--all", action="store_true", help="every range of the map not verified in the last 20 hours (a timer on several hosts verifies each once)")  # fmt: skip
    asked = verbs.add_parser("request", help="ask for a backup of a range, taken at its timer's next run")  # fmt: skip
    asked.add_argument("range", type=shard_span, help="FIRST-LAST, as in the map")
    pruned = verbs.add_parser("prune", help="remove what is past the retention from a directory store")  # fmt: skip
    pruned.add_argument("--keep-days", type=float, default=KEEP_DAYS, help=f"how long backups and binary logs are kept (default {KEEP_DAYS})")  # fmt: skip
    for parser in (made, listed, archive, logs, checked, pruned):
        add_store_options(parser)


def add_store_options(parser: Any) -> None:
    """``--store`` (by default the control plane's: ``PINBOARD_BACKUP_STORE``, or
    ``SHARDSTORE_BACKUP_STORE``), ``--endpoint-url`` and ``--kms-key``."""
    parser.add_argument("--store", help="file:///DIRECTORY or s3://BUCKET/PREFIX (default: PINBOARD_BACKUP_STORE)")  # fmt: skip
    parser.add_argument("--endpoint-url", help="an S3 API server other than AWS's")
    parser.add_argument("--kms-key", help="S3: the KMS key each object is encrypted with (default: PINBOARD_BACKUP_KMS_KEY)")  # fmt: skip


def store_of(args: argparse.Namespace, control: Control) -> BackupStore:
    """The store ``--store`` names, else the control plane's; ConfigError if neither."""
    if args.store:
        return open_store(args.store, endpoint_url=args.endpoint_url, kms_key=args.kms_key)
    if control.backups is None:
        raise ConfigError("no backup store: give --store URL, or set PINBOARD_BACKUP_STORE")
    return control.backups


def handle(args: argparse.Namespace, control: Control, out: TextIO) -> int:
    if args.verb == "request":
        plan = plan_backup_request(control.source, span=list(args.range), author=control.operator)  # fmt: skip
        asked = run(plan, journal=control.journal, locks=control.locks, operator=control.operator)  # fmt: skip
        out.write("".join(f"{note}\n" for note in asked.notes) + (asked.error and f"{asked.error}\n"))  # fmt: skip
        return 0 if asked.ok else 1
    store = store_of(args, control)
    if args.verb == "prune":
        if not isinstance(store, DirectoryStore):
            out.write(f"{store.url}: the bucket's lifecycle rule expires what is past the retention; nothing pruned here\n")  # fmt: skip
            return 0
        if not 1 <= args.keep_days <= 3650:
            raise ConfigError("backup prune: --keep-days is 1 to 3650")
        done = prune(store, args.keep_days * 86400, time.time())
        out.write(f"pruned {len(done.backups)} backups and {len(done.logs)} binary logs from {store.url}: kept what began after {_when(done.horizon)}\n")  # fmt: skip
        out.write("".join(f"    {name}\n" for name in [*done.backups, *done.logs]))
        return 0
    if args.verb == "archive":

        def said(line: str) -> None:
            out.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
            out.flush()

        keep_archiving(control, store, spool=args.spool, instance=args.instance, interval=args.interval, say=said)  # fmt: skip
        return 0
    if args.verb == "logs":
        for log in archived(store, args.host):
            out.write(f"{log.file}  {log.size} bytes  {'closed' if log.closed else 'open'}  starts after {log.starts or '-'}\n")  # fmt: skip
        return 0
    if args.verb == "verify":
        if (args.range is None) == (not args.all):
            raise ConfigError("backup verify: name a range FIRST-LAST, or --all")
        document = control.source.current(documents.SHARDS).document
        spans = [list(r["range"]) for r in document["ranges"]] if args.all else [list(args.range)]
        if args.all:  # what another host verified lately, well, is not verified again
            lately = backup_records.status(control.source).verified
            spans = [s for s in spans if not _verified_lately(lately.get(f"{s[0]}-{s[1]}"))]
        failed = 0
        for span in spans:
            outcome = verify(control, store, span)
            out.write(f"{'verified' if outcome.ok else 'VERIFICATION FAILED'}: range {outcome.span}, backup {outcome.backup}, in {outcome.seconds:.1f}s\n{outcome.said}\n")  # fmt: skip
            failed += not outcome.ok
        return 1 if failed else 0
    if args.verb == "list":
        for m in manifests(store, args.host):
            when = _when(m.started)
            out.write(f"{m.host}/{m.name}  {when}  {m.size / 1e6:.1f} MB in {len(m.parts)} parts, {m.ended - m.started:.1f}s  shards {m.ranges}  at {m.gtid or '-'}\n")  # fmt: skip
        return 0
    document = control.source.current(documents.SHARDS).document
    host = _host(control, document, args.target, master=args.master)
    if args.replica_only and (skip := _not_a_replica(document, host)):
        out.write(f"{host} {skip}: not backed up (--replica-only)\n")
        return 0
    if args.if_due is not None:
        reason = _due(control, document, host, args.if_due * 3600)
        if reason is None:
            out.write(f"{host}: no backup due (--if-due {args.if_due:g})\n")
            return 0
        out.write(f"{host}: a backup is due: {reason}\n")
    ranges = ", ".join(f"{r['range'][0]}-{r['range'][1]}" for r in document["ranges"] if host in (r["master"], *replicas_of(r)))  # fmt: skip
    address = document["hosts"][host]
    with control.mysql(address) as h:
        login = (h.user, h.password)
    out.write(f"backing {host} (shards {ranges or 'none'}) up into {store.url}\n")

    def say(line: str) -> None:
        out.write(f"    {line}\n")

    made = take(store, host=host, address=address, login=login, ranges=ranges, say=say)
    backup_records.taken(control.source, made)
    out.write(f"{made.key}: {made.size / 1e6:.1f} MB in {len(made.parts)} parts, {made.ended - made.started:.1f}s, at {made.gtid or '-'}\n")  # fmt: skip
    return 0


def _due(control: Control, document: dict[str, Any], host: str, every: float) -> str | None:
    """Why ``host`` is to back its range up now: its range is due one (``Backups.due``)
    and it is the replica that range's backups are taken from. None if not."""
    records = backup_records.status(control.source)
    for entry in document["ranges"]:
        span = f"{entry['range'][0]}-{entry['range'][1]}"
        if host not in (entry["master"], *replicas_of(entry)):
            continue
        reason = records.due(span, every, time.time())
        if reason is not None and _host(control, document, span, master=False) == host:
            return f"range {span}: {reason}"
    return None


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(seconds))


#: How recently a range verified well is skipped by ``verify --all``.
VERIFIED_LATELY_SECONDS = 20 * 3600


def _verified_lately(outcome: dict[str, Any] | None) -> bool:
    return bool(outcome and outcome.get("ok") and time.time() - float(outcome["at"]) < VERIFIED_LATELY_SECONDS)  # fmt: skip


def _not_a_replica(document: dict[str, Any], host: str) -> str | None:
    """Why ``host`` is no replica in service (None if it is one)."""
    if host in document.get("out_of_service", []):
        return "is out of service"
    for entry in document["ranges"]:
        if entry["master"] == host:
            return f"masters shards {entry['range'][0]}-{entry['range'][1]}"
    if not any(host in replicas_of(entry) for entry in document["ranges"]):
        return "serves no range"
    return None


def _host(control: Control, document: dict[str, Any], target: str, *, master: bool) -> str:
    """The host ``target`` names, or the one of its range to back up; InvalidTopology."""
    if target in document["hosts"]:
        if not str(document["hosts"][target]).startswith("mysql://"):
            raise InvalidTopology(f"{target} is not a MySQL host")
        return target
    try:
        span = list(shard_span(target))
    except ConfigError:
        raise InvalidTopology(f"no host {target} in the shard map (nor a range FIRST-LAST)") from None  # fmt: skip
    entry = next((r for r in document["ranges"] if r["range"] == span), None)
    if entry is None:
        raise InvalidTopology(f"no host {target} and no range {target} in the shard map")
    if master:
        return str(entry["master"])
    out = set(document.get("out_of_service", []))
    for name in (n for n in replicas_of(entry) if n not in out):
        try:
            with control.mysql(document["hosts"][name]) as r:
                status = r.replica_status()
            if status is not None and status.healthy:
                return str(name)
        except HostError:
            continue
    raise InvalidTopology(f"no replica of {target} answers and replicates: back its master up with --master")  # fmt: skip
