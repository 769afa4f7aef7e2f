"""``shardstore restore FIRST-LAST --to TIME|GTID|latest --onto HOST [HOST...] --store URL``:
a lost range back from its newest backup and the archive (``restore.py``); and
``shardstore restore-shard SHARD --to TIME --into HOST --store URL [--copy-back]``: one
shard as of a time beside the live one, compared with it (``restore_shard.py``). Each is
planned, shown and journaled as every operation is (cli.py runs the plan)."""

from __future__ import annotations

import argparse
import calendar
import re
import time
from typing import Any

from .cli_backup import add_store_options, store_of
from .cli_reports import shard_span
from .config_source import ConfigError
from .context import Control
from .plans import Plan
from .restore import plan_restore
from .restore_shard import plan_restore_shard

_GTIDS = re.compile(r"^\d+-\d+-\d+(,\d+-\d+-\d+)*$")
_TIMES = ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")


def add_parser(commands: Any) -> None:
    p = commands.add_parser("restore", help="bring a lost range back from its backup and archived binary logs, onto new hosts")  # fmt: skip
    p.add_argument("range", type=shard_span, help="FIRST-LAST, as in the map")
    p.add_argument("--to", required=True, help="a time (UTC: 2026-11-29T08:30:00Z), a GTID (0-1-42), or latest")  # fmt: skip
    p.add_argument("--onto", nargs="+", required=True, metavar="HOST", help="hosts of the map serving no range: the first becomes the master")  # fmt: skip
    one = commands.add_parser("restore-shard", help="one shard as of a time onto a spare host, compared with the live one (and its deleted rows written back)")  # fmt: skip
    one.add_argument("shard", type=int)
    one.add_argument("--to", required=True, help="a time (UTC: 2026-11-29T08:30:00Z)")
    one.add_argument("--into", required=True, metavar="HOST", help="a host of the map serving no range")  # fmt: skip
    one.add_argument("--copy-back", action="store_true", help="write the rows deleted since back into the live shard")  # fmt: skip
    for parser in (p, one):
        add_store_options(parser)
        parser.add_argument("--dry-run", action="store_true", help="print the plan only")


def target(text: str) -> tuple[float | None, str | None]:
    """``--to``: (a time, None), (None, a GTID), or (None, None) for latest."""
    if text == "latest":
        return None, None
    if _GTIDS.match(text):
        return None, text
    for form in _TIMES:
        try:
            return float(calendar.timegm(time.strptime(text, form))), None
        except ValueError:
            continue
    raise ConfigError(f"--to {text!r}: a time (2026-11-29T08:30:00Z, UTC), a GTID (0-1-42), or latest")  # fmt: skip


def plan(args: argparse.Namespace, control: Control) -> Plan:
    to_time, to_gtid = target(args.to)
    store = store_of(args, control)
    if args.command == "restore-shard":
        if to_time is None:
            raise ConfigError("restore-shard --to takes a time (2026-11-29T08:30:00Z, UTC)")
        types = {t.table: t.type_id for t in control.store().catalog.types.values()}
        return plan_restore_shard(
            control.source, store, shard=args.shard, to_time=to_time, into=args.into,
            author=control.operator, copy_rows_back=args.copy_back, types=types, connect=control.mysql,
        )  # fmt: skip
    return plan_restore(
        control.source, store, span=list(args.range), onto=args.onto, author=control.operator,
        to_time=to_time, to_gtid=to_gtid, connect=control.mysql,
    )  # fmt: skip
