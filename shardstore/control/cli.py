"""The control plane's commands, as ``shardstore`` subcommands (``python -m shardstore``
and ``python manage.py shardstore`` alike).

    topology show [--doc D] [--version N]      topology history [--doc D]
    topology diff A B [--doc D]                topology publish FILE --reason TEXT
                                                   [--doc D] [--expect-version N] [--dry-run]
    topology rollback N --reason TEXT [--doc D] [--dry-run]
    bring-up [--dry-run]                       (a new deployment's pairs: replicate, open)
    open-range --count N --master H --master-address URL [--replica H --replica-address URL]...
               [--keep-open] [--dry-run]
    close-range FIRST LAST [--dry-run]          host-service HOST (--out | --in) [--dry-run]
    cache-server POOL HOST:PORT (--add | --remove) [--dry-run]
    redis-move FIRST LAST INSTANCE [--url redis://...] [--dry-run]
    failover HOST [--to REPLICA | --emergency [--accept-data-loss]] [--dry-run]
    split HOST [--dry-run]       split --revert SPLIT [--emergency [--accept-data-loss]] [--dry-run]
    cleanup SPLIT [--store URL | --without-backup] [--dry-run]                   diff HOST_A HOST_B [--shards FIRST-LAST]
    rebuild HOST [--master M] [--max-threads-running N] [--parallel N] [--live] [--dry-run]
    reopen HOST [--dry-run]          (a master that restarted: its GTID domain, semi-sync, writable)
    durability FIRST-LAST (strict | degrade-after N) [--dry-run]   (what a range's commits wait for)
    guard run [--instance NAME]      guard status [--json]      guard (pause | unpause) --reason TEXT
    operations [--json]              abort OP [--close]              resume OP
    pairs [--json] [--max-lag S]     (every master backed up, every stream healthy? 1 if not)
    backup (take TARGET | list | archive --spool DIR | logs HOST) --store URL
    restore FIRST-LAST --to (TIME | GTID | latest) --onto HOST... --store URL [--dry-run]
    restore-shard SHARD --to TIME --into HOST --store URL [--copy-back] [--dry-run]

Every operation prints its plan; without ``--dry-run`` it then runs it under the
hosts' locks, journaled, and prints each step as it goes. ``operations`` lists the
runs the journal holds open (running, or left open by a process that died part way),
and ``abort``/``resume`` end one of those (recovery.py).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ..backups.store import open_store
from ..exceptions import ShardStoreError
from . import cli_backup, cli_guard, cli_restore, documents
from . import cli_reports as reports
from .cache_servers import plan_cache_server
from .cli_reports import shard_span
from .close_range import plan_close_range
from .config_source import ConfigError
from .context import Control
from .durability_change import plan_durability
from .emergency import plan_emergency_failover
from .failover import plan_failover
from .guard import plan_pause
from .host_service import plan_host_service
from .new_pairs import plan_bring_up
from .open_range import plan_open_range
from .pairs import MAX_LAG
from .plans import Plan, run
from .publish import plan_publish, plan_rollback
from .rebuild import plan_rebuild
from .redis_move import plan_redis_move
from .reopen import plan_reopen
from .snapshot_copy import COPY_STREAMS
from .split import plan_split
from .split_cleanup import plan_cleanup
from .split_emergency import plan_split_emergency
from .split_revert import plan_split_revert

OPERATIONS = (
    "bring-up", "open-range", "close-range", "host-service", "cache-server", "redis-move", "failover",
    "split", "cleanup", "rebuild", "reopen", "durability", "diff", "operations", "abort", "resume",
    "pairs", "guard", "backup", "restore", "restore-shard",
)  # fmt: skip


def add_parsers(commands: Any) -> None:
    topology = commands.add_parser("topology", help="show, diff, publish or roll back config")
    verbs = topology.add_subparsers(dest="verb")
    show = verbs.add_parser("show", help="a document (the version in force, or --version N)")
    show.add_argument("--version", type=int)
    verbs.add_parser("history", help="every published version, newest first")
    diff = verbs.add_parser("diff", help="what changed between two versions")
    diff.add_argument("a", type=int)
    diff.add_argument("b", type=int)
    publish = verbs.add_parser("publish", help="validate and publish a document from a file")
    publish.add_argument("file")
    publish.add_argument("--expect-version", type=int)
    rollback = verbs.add_parser("rollback", help="publish an earlier version as a new one")
    rollback.add_argument("to_version", type=int)
    for parser in (show, verbs.choices["history"], diff, publish, rollback, topology):
        parser.add_argument("--doc", choices=documents.NAMES, default=documents.SHARDS)
    for parser in (publish, rollback):
        parser.add_argument("--reason", required=True)
        parser.add_argument("--dry-run", action="store_true")

    ops = {
        "bring-up": "start a new deployment's MySQL pairs: replicas follow, masters open",
        "open-range": "open new shards at the end of the map on new hosts",
        "close-range": "stop new users landing in some shards",
        "host-service": "take a MySQL host out of service, or put it back",
        "cache-server": "add a memcached server to a pool, or remove one",
        "redis-move": "move Redis virtual shards to another instance",
        "failover": "hand a master's shards to a replica (planned, or --emergency)",
        "split": "hand half of a master's shards to its replica (or --revert a split)",
        "cleanup": "drop the shard copies a split left behind",
        "rebuild": "make a host a replica of its master again: copy, replicate, in service",
        "reopen": "make a master that restarted writable again, in its GTID domain",
        "durability": "what a range's commits wait for when no replica acknowledges",
    }
    parsers = {name: commands.add_parser(name, help=text) for name, text in ops.items()}
    p = parsers["open-range"]
    p.add_argument("--count", type=int, required=True, help="how many new shards")
    p.add_argument("--master", required=True)
    p.add_argument("--master-address", required=True)
    p.add_argument("--replica", action="append", default=[], help="a replica (once for each)")
    p.add_argument("--replica-address", action="append", default=[], help="its address, in order")
    p.add_argument("--keep-open", action="store_true", help="old open ranges stay open too")
    p = parsers["close-range"]
    p.add_argument("first", type=int)
    p.add_argument("last", type=int)
    p = parsers["host-service"]
    p.add_argument("host")
    state = p.add_mutually_exclusive_group(required=True)
    state.add_argument("--out", dest="in_service", action="store_false")
    state.add_argument("--in", dest="in_service", action="store_true")
    p = parsers["cache-server"]
    p.add_argument("pool")
    p.add_argument("server")
    change = p.add_mutually_exclusive_group(required=True)
    change.add_argument("--add", dest="add", action="store_true")
    change.add_argument("--remove", dest="add", action="store_false")
    p = parsers["redis-move"]
    p.add_argument("first", type=int)
    p.add_argument("last", type=int)
    p.add_argument("instance")
    p.add_argument("--url")
    parsers["failover"].add_argument("host")
    parsers["reopen"].add_argument("host")
    parsers["durability"].add_argument("range", type=shard_span, help="FIRST-LAST, as in the map")
    parsers["durability"].add_argument("policy", nargs="+", help="strict, or degrade-after N (s)")
    p = parsers["split"]
    p.add_argument("host", nargs="?")
    for name, to in (("failover", "promote (planned; default: the one that received the most)"), ("split", "hand the shards to (default: the first the map names)")):  # fmt: skip
        parsers[name].add_argument("--to", metavar="REPLICA", help=f"the replica to {to}")
    p.add_argument("--revert", type=int, metavar="SPLIT", help="undo split SPLIT (its map version)")
    for name, emergency in (
        ("failover", "the master is down, or no replica receives from it: fence it, promote one"),
        ("split", "with --revert: its replica is lost; fence it, cut back to the host's copies"),
    ):
        parsers[name].add_argument("--emergency", action="store_true", help=emergency)
        parsers[name].add_argument("--accept-data-loss", action="store_true", help="with --emergency: go on though writes may be lost (the journal names the GTIDs)")  # fmt: skip
    p = parsers["cleanup"]
    p.add_argument("split", type=int, help="the split (the map version it published)")
    p.add_argument("--store", help="where the backups are (default: PINBOARD_BACKUP_STORE): one of the moved shards' range since the split is needed")  # fmt: skip
    p.add_argument("--without-backup", action="store_true", help="drop the copies though no backup of the moved shards exists")  # fmt: skip
    p = parsers["rebuild"]
    p.add_argument("host")
    p.add_argument("--master", help="the master to copy and follow (when the map cannot tell)")
    busy = "the copy pauses while the master runs more statements than this"
    p.add_argument("--max-threads-running", type=int, default=32, help=busy)
    p.add_argument("--parallel", type=int, default=COPY_STREAMS, help="copy streams (one snapshot)")
    p.add_argument("--live", action="store_true", help="copy from the master even when a fresh backup exists")  # fmt: skip
    for parser in parsers.values():
        parser.add_argument("--dry-run", action="store_true", help="print the plan only")
    cli_guard.add_parser(commands)
    cli_backup.add_parser(commands)
    cli_restore.add_parser(commands)
    p = commands.add_parser("operations", help="the runs the journal holds open")
    p.add_argument("--json", action="store_true", help="as JSON, for scripts")
    p = commands.add_parser("abort", help="undo a run that was left open (see operations)")
    p.add_argument("operation", help="its journal entry")
    p.add_argument(
        "--close",
        action="store_true",
        help="close its entry without undoing anything (you have put things right by hand)",
    )
    p = commands.add_parser("resume", help="finish a run that was left open (see operations)")
    p.add_argument("operation", help="its journal entry")
    p = commands.add_parser("diff", help="compare the shards two MySQL hosts hold")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--shards", help="FIRST-LAST (default: the shards either host masters)")
    p = commands.add_parser("pairs", help="is every master backed up? (exit status 1 if not)")
    p.add_argument("--json", action="store_true", help="as JSON, for an alert")
    p.add_argument("--max-lag", type=int, default=MAX_LAG, help="seconds a replica may lag")


def plan_of(
    args: argparse.Namespace, control: Control, say: Callable[[str], None] = lambda line: None
) -> Plan:
    """The plan a control command asks for (operations, publish, rollback); ``say`` prints
    a long step's progress."""
    source, author = control.source, control.operator
    if args.command in ("restore", "restore-shard"):
        return cli_restore.plan(args, control)
    if args.command == "topology":
        if args.verb == "publish":
            try:
                document = json.loads(Path(args.file).read_text())
            except (OSError, ValueError) as exc:
                raise ConfigError(f"cannot read a JSON document from {args.file}: {exc}") from None
            return plan_publish(
                source,
                args.doc,
                document,
                author=author,
                reason=args.reason,
                expect_version=args.expect_version,
                connect=control.mysql,
            )
        return plan_rollback(
            source,
            args.doc,
            args.to_version,
            author=author,
            reason=args.reason,
            connect=control.mysql,
        )
    if args.command == "bring-up":
        return plan_bring_up(source, connect=control.mysql)
    if args.command == "open-range":
        return plan_open_range(
            source,
            control.connect,
            count=args.count,
            master=args.master,
            master_address=args.master_address,
            replicas=_replicas(args.replica, args.replica_address),
            keep_open=args.keep_open,
            author=author,
            mysql=control.mysql,
        )
    if args.command == "close-range":
        return plan_close_range(source, first=args.first, last=args.last, author=author)
    if args.command == "host-service":
        return plan_host_service(source, host=args.host, in_service=args.in_service, author=author)
    if args.command == "cache-server":
        return plan_cache_server(
            source, pool=args.pool, server=args.server, add=args.add, author=author
        )
    if args.command == "failover":
        if args.emergency and args.to:
            raise ConfigError("--to goes with a planned failover: an emergency promotes the replica that received the most")  # fmt: skip
        if args.emergency:
            return plan_emergency_failover(
                source,
                host=args.host,
                author=author,
                fence=control.fence,
                connect=control.mysql,
                accept_data_loss=args.accept_data_loss,
            )
        if args.accept_data_loss:
            raise ConfigError("--accept-data-loss goes with --emergency only")
        return plan_failover(
            source, host=args.host, author=author, to=args.to, connect=control.mysql
        )
    if args.command == "split":
        if args.accept_data_loss and not args.emergency:
            raise ConfigError("--accept-data-loss goes with --emergency only")
        if args.revert is not None and args.emergency:
            return plan_split_emergency(
                source, split=args.revert, author=author, fence=control.fence,
                connect=control.mysql, accept_data_loss=args.accept_data_loss,
            )  # fmt: skip
        if args.revert is not None:
            return plan_split_revert(
                source, split=args.revert, author=author, connect=control.mysql
            )
        if args.emergency:
            raise ConfigError("--emergency goes with --revert SPLIT only")
        if not args.host:
            raise ConfigError("split needs a HOST (or --revert SPLIT)")
        return plan_split(source, host=args.host, author=author, to=args.to, connect=control.mysql)  # fmt: skip
    if args.command == "reopen":
        return plan_reopen(source, host=args.host, author=author, connect=control.mysql)
    if args.command == "guard":
        guard = cli_guard.guard_of(args, control)
        return plan_pause(guard, paused=args.verb == "pause", reason=args.reason, author=author)
    if args.command == "durability":
        return plan_durability(
            source, shards=args.range, policy=" ".join(args.policy), author=author,
            connect=control.mysql,
        )  # fmt: skip
    if args.command == "cleanup":
        store = open_store(args.store) if args.store else control.backups
        return plan_cleanup(source, split=args.split, author=author, connect=control.mysql, store=store, without_backup=args.without_backup)  # fmt: skip
    if args.command == "rebuild":
        return plan_rebuild(
            source, host=args.host, author=author, connect=control.mysql, master=args.master,
            max_threads_running=args.max_threads_running, parallel=args.parallel, say=say,
            store=None if args.live else control.backups,
        )  # fmt: skip
    keys = control.redis_keys
    if keys is None:
        raise ShardStoreError("redis-move: say what the site keeps in Redis (--redis-keys)")
    return plan_redis_move(
        source, control.store(), first=args.first, last=args.last, instance=args.instance,
        url=args.url, author=author, keys=keys,
    )  # fmt: skip


def _replicas(names: list[str], addresses: list[str]) -> dict[str, str]:
    """``--replica`` and ``--replica-address``, given once for each replica, paired."""
    if len(names) != len(addresses):
        raise ConfigError("give --replica-address once for each --replica, in the same order")
    return dict(zip(names, addresses, strict=True))


def handle(args: argparse.Namespace, control: Control, out: TextIO) -> int:
    """Run a control command; returns the exit status."""
    source = control.source
    if args.command == "topology" and args.verb in (None, "show", "history", "diff"):
        if args.verb == "history":
            for r in source.history(args.doc):
                out.write(f"v{r.version}  {r.published_at}  {r.author}: {r.reason}\n")
        elif args.verb == "diff":
            a, b = source.revision(args.doc, args.a), source.revision(args.doc, args.b)
            out.write(documents.diff(a.document, b.document) + "\n")
        else:
            version = getattr(args, "version", None)
            revision = (
                source.current(args.doc) if version is None else source.revision(args.doc, version)
            )
            out.write(json.dumps(revision.document, indent=2, sort_keys=True) + "\n")
        return 0
    if args.command == "diff":
        return reports.diff(args, control, out)
    if args.command == "pairs":
        return reports.pairs(args, control, out)
    if args.command == "guard" and args.verb in ("run", "status"):
        return cli_guard.handle(args, control, out)
    if args.command == "backup":
        return cli_backup.handle(args, control, out)
    if args.command in ("operations", "abort", "resume"):
        return reports.open_operations(args, control, out)
    started = time.monotonic()

    def say(line: str) -> None:
        out.write(f"    {line} (at +{time.monotonic() - started:.2f}s)\n")
        out.flush()

    plan = plan_of(args, control, say)
    out.write(plan.text() + "\n")
    if "diff" in plan.params:
        out.write(plan.params["diff"] + "\n")

    def progress(index: int, total: int, name: str) -> None:
        out.write(f"[{index}/{total}] {name} (at +{time.monotonic() - started:.2f}s)\n")
        out.flush()

    outcome = run(
        plan,
        journal=control.journal,
        locks=control.locks,
        operator=control.operator,
        dry_run=args.dry_run,
        progress=progress,
    )
    if outcome.dry_run:
        out.write("dry run: nothing changed\n")
        return 0
    for note in outcome.notes:
        out.write(f"  {note}\n")
    out.write(
        ("done" if outcome.ok else f"FAILED: {outcome.error}") + f" in {outcome.seconds:.1f}s\n"
    )
    return 0 if outcome.ok else 1
