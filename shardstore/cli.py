"""The ``shardstore`` command line: shards, mappings, IDs, and the control plane.

    python -m shardstore --catalog mysite.catalog:CATALOG --topology topology.json init
    python -m shardstore --catalog mysite.catalog:CATALOG --topology t.json reconcile [--check]
    python -m shardstore --catalog mysite.catalog:CATALOG decode 241294492511762325
    python -m shardstore bucket 1.2.3.4
    python -m shardstore --topology zk://127.0.0.1:2181/pinboard topology history
    python -m shardstore --topology zk://127.0.0.1:2181/pinboard --journal ops.sqlite3 failover db1a

``--catalog`` names the site's data model (``MODULE:NAME`` of a ``Catalog``), which a
command that opens a store needs; ``--redis-keys`` what it keeps in Redis (``MODULE:NAME``
of a ``control.redis_move.RedisKeys``; pinboard's is ``social.redis_keys:REDIS_KEYS``),
which ``redis-move`` needs; ``--topology`` is a config directory, a shard-map file or
``zk://hosts/root``; ``--journal`` (or ``SHARDSTORE_JOURNAL``) the SQLite file the
operations are journaled in, without which an operation shows its plan and refuses to run;
the control commands (``topology ...``, ``open-range``, ``close-range``,
``host-service``, ``cache-server``, ``redis-move``, ``failover``...) are in
control/cli.py. MySQL logins, each ``user:password``: a store logs in to the hosts as
``SHARDSTORE_MYSQL_LOGIN`` (the site's ``PINBOARD_MYSQL_LOGIN``: a shard map holds no
password), operators' connections (failover) as ``SHARDSTORE_MYSQL_ADMIN``, and a replica
an operation points at its source logs in to it as ``SHARDSTORE_MYSQL_REPLICATION``
(REPLICATION SLAVE only); ``SHARDSTORE_FENCE_COMMAND`` fences an unreachable master
(control/fencing.py). ``python manage.py shardstore ...`` runs the same commands on
the site's catalog, store, config source and journal.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypeVar

from .backups.store import backup_store
from .catalog import Catalog
from .control import cli as control_cli
from .control.context import Control
from .control.fencing import command_fence
from .control.journal_file import FileJournal, UnrecordedJournal
from .control.locks import locks_for
from .control.mysql_hosts import admin
from .control.plans import Journal
from .control.redis_move import RedisKeys
from .control.replacement import command_provision
from .control.sources import open_source
from .exceptions import ShardStoreError
from .ids import decompose
from .interface import StoreInterface
from .modshard import bucket
from .reconcile import reconcile
from .schema import init_shards
from .store import Store
from .topology import Topology

T = TypeVar("T")


class ProgressLine:
    """A one-line counter with a rate, rewritten in place: ``init: 1024/4096 (812/s)``."""

    def __init__(self, label: str, out: TextIO) -> None:
        self.label, self.out, self.started = label, out, time.monotonic()
        self._shown = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._shown < 0.2:
            return
        self._shown = now
        rate = done / max(now - self.started, 1e-9)
        end = "\n" if done == total else ""
        self.out.write(f"\r{self.label}: {done}/{total} ({rate:,.0f}/s){end}")
        self.out.flush()


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="shardstore", description=__doc__.split("\n\n")[0])
    top.add_argument(
        "--catalog", help="the data model, MODULE:NAME of a shardstore.Catalog (-m only)"
    )
    top.add_argument(
        "--redis-keys",
        help="what the site keeps in Redis, MODULE:NAME of a RedisKeys (-m redis-move only)",
    )
    top.add_argument(
        "--topology", help="config directory, shard-map file or zk://hosts/root (-m only)"
    )
    top.add_argument(
        "--journal",
        default=os.environ.get("SHARDSTORE_JOURNAL"),
        help="the operations' journal, a SQLite file (-m only; without one, plans are only shown)",
    )
    commands = top.add_subparsers(dest="command", required=True)
    commands.add_parser("init", help="create every shard database and table (idempotent)")
    rec = commands.add_parser("reconcile", help="repair half-written mapping pairs")
    rec.add_argument(
        "relations", nargs="*", help="relations to check (default: all with an inverse)"
    )
    rec.add_argument("--check", action="store_true", help="report only, change nothing")
    dec = commands.add_parser("decode", help="split an object ID into shard, type and local id")
    dec.add_argument("ids", nargs="+")
    buc = commands.add_parser("bucket", help="the mod-shard bucket of a key")
    buc.add_argument("keys", nargs="+")
    control_cli.add_parsers(commands)
    return top


def main(
    argv: Sequence[str] | None = None,
    *,
    catalog: Catalog | None = None,
    store_factory: Callable[[], StoreInterface] | None = None,
    control_factory: Callable[[], Control] | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    args = parser().parse_args(argv)
    redis_keys = None
    try:
        if catalog is None and args.catalog:
            catalog = named_catalog(args.catalog)
        if args.redis_keys:
            redis_keys = _named("--redis-keys", args.redis_keys, RedisKeys, "REDIS_KEYS")
    except ValueError as exc:
        err.write(f"shardstore: {exc}\n")
        return 2
    if args.command == "decode":
        types = catalog.types_by_id if catalog else {}
        for object_id in args.ids:
            fields = decompose(object_id)
            kind = types.get(fields.type_id)
            name = kind.name if kind else "unregistered" if catalog else "no --catalog"
            out.write(
                f"{object_id}: shard {fields.shard_id}, type {fields.type_id}"
                f" ({name}), local {fields.local_id}\n"
            )
        return 0
    if args.command == "bucket":
        for key in args.keys:
            out.write(f"{key}: bucket {bucket(key)}\n")
        return 0

    is_control = args.command == "topology" or args.command in control_cli.OPERATIONS
    with contextlib.ExitStack() as standalone:
        if (control_factory if is_control else store_factory) is None:
            if not args.topology:
                err.write("shardstore: --topology is required for this command\n")
                return 2
            if catalog is None and not is_control:
                err.write("shardstore: --catalog is required for this command\n")
                return 2
            journal = FileJournal(args.journal) if args.journal else UnrecordedJournal()
            control = _standalone(open_source(args.topology), catalog, standalone, journal, redis_keys)  # fmt: skip
            store_factory, control_factory = control.store, lambda: control
        try:
            if is_control:
                assert control_factory is not None
                return control_cli.handle(args, control_factory(), out)
            assert store_factory is not None
            return _data_plane(args, store_factory(), out, err)
        except ShardStoreError as exc:  # bad input, a conflict, a host down: said, not traced
            err.write(f"shardstore: {exc}\n")
            return 1


def _data_plane(args: argparse.Namespace, store: StoreInterface, out: TextIO, err: TextIO) -> int:
    if args.command == "init":
        count = init_shards(store, progress=ProgressLine("init", err))
        out.write(f"{count} shards ready on {len(store.topology.hosts)} host(s)\n")
    elif args.command == "reconcile":
        names = args.relations or [r.name for r in store.catalog.relations.values() if r.inverse]
        for name in names:
            report = reconcile(store, name, repair=not args.check, progress=ProgressLine(name, err))
            verb = "found" if args.check else "repaired"
            out.write(
                f"{name}: {report.checked} rows checked, {verb} {report.missing_inverse} missing"
                f" inverse and {report.orphan_inverse} orphan inverse rows\n"
            )
    return 0


def named_catalog(name: str) -> Catalog:
    """The ``Catalog`` that ``MODULE:NAME`` names."""
    return _named("--catalog", name, Catalog, "CATALOG")


def _named(option: str, name: str, kind: type[T], default: str) -> T:
    """The ``kind`` that ``MODULE:NAME`` names (``MODULE`` alone: its ``default``)."""
    module_name, _, attribute = name.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), attribute or default)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{option} {name}: {exc}") from None
    if not isinstance(found, kind):
        raise ValueError(f"{option} {name}: a {type(found).__name__}, not a {kind.__name__}")
    return found


def _standalone(
    source: Any,
    catalog: Catalog | None,
    closing: contextlib.ExitStack,
    journal: Journal,
    redis_keys: RedisKeys | None = None,
) -> Control:
    """The control of ``python -m shardstore``: the source's shard map, its locks, and the
    journal it is given (``--journal``; without one a plan is shown, never run). Without a
    catalog, only the commands that open no store can run."""
    closing.callback(source.close)
    opened: list[Store] = []

    def open_store(topology: Topology) -> Store:
        if catalog is None:
            raise ShardStoreError("this command opens a store: give --catalog MODULE:NAME")
        login = os.environ.get("SHARDSTORE_MYSQL_LOGIN")
        return Store(
            topology, catalog=catalog, backend_options={"mysql_login": login} if login else {}
        )

    def store_factory() -> Store:
        if not opened:
            opened.append(open_store(Topology.from_json(source.current("shards").document)))
            closing.callback(opened[0].close)
        return opened[0]

    return Control(
        source,
        store_factory,
        open_store,
        journal,
        locks_for(source),
        getpass.getuser(),
        admin(
            os.environ.get("SHARDSTORE_MYSQL_ADMIN"),
            # What a replica keeps in its master.info, so never the operators' account.
            os.environ.get("SHARDSTORE_MYSQL_REPLICATION"),
        ),
        command_fence(os.environ.get("SHARDSTORE_FENCE_COMMAND")),
        redis_keys,
        command_provision(os.environ.get("SHARDSTORE_PROVISION_COMMAND")),
        backup_store(
            os.environ.get("SHARDSTORE_BACKUP_STORE"), os.environ.get("SHARDSTORE_BACKUP_KMS_KEY")
        ),
    )
