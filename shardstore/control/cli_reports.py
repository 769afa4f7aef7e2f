"""The control commands that report rather than change: ``operations`` (and ``abort`` and
``resume``, which end what it lists), ``diff`` and ``pairs``."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from ..exceptions import ShardStoreError
from . import documents, recovery
from .config_source import ConfigError
from .context import Control
from .diff import plan_diff
from .mysql_hosts import HostError
from .pairs import pair_health


def shard_span(text: str) -> tuple[int, int]:
    """``FIRST-LAST`` as the pair of shard numbers (an argparse type)."""
    first, _, last = text.partition("-")
    if not (first.isdigit() and last.isdigit()):
        raise ConfigError(f"{text}: expected FIRST-LAST, shard numbers")
    return int(first), int(last)


def open_operations(args: argparse.Namespace, control: Control, out: TextIO) -> int:
    """``operations``, ``abort OP``, ``resume OP``."""
    found = control.journal.open_operations()
    if args.command == "operations":
        rows = [
            {
                "id": op.id,
                "operation": op.operation,
                "summary": op.summary,
                "operator": op.operator,
                "after_step": op.done,
                "state": recovery.state(op, control.locks),
                "locks": list(op.locks),
            }
            for op in found
        ]
        if args.json:
            out.write(json.dumps(rows, indent=2, default=str) + "\n")
        for row in [] if args.json else rows:
            out.write(
                f"{row['id']}  {row['state']:<9}  after step {row['after_step']}"
                f"  {row['operator']}: {row['summary']}\n"
            )
        if not rows and not args.json:
            out.write("no open operation\n")
        return 0
    how = "close" if args.command == "abort" and args.close else args.command
    try:
        result = recovery.end(
            args.operation,
            how,
            source=control.source,
            journal=control.journal,
            locks=control.locks,
            operator=control.operator,
            connect=control.mysql,
            fence=control.fence,
        )
    except ShardStoreError as exc:
        out.write(f"FAILED: {exc}\n")
        return 1
    out.write(result + "\n")
    return 0


def diff(args: argparse.Namespace, control: Control, out: TextIO) -> int:
    """``diff A B``: print the comparison; exit status 1 if the hosts differ."""
    shards = shard_span(args.shards) if args.shards else None
    plan = plan_diff(control.source, a=args.a, b=args.b, shards=shards, connect=control.mysql)
    try:
        out.write(str(plan.steps[0].run()) + "\n")
    except HostError as exc:
        out.write(f"{exc}\n")
        return 1
    return 0


def pairs(args: argparse.Namespace, control: Control, out: TextIO) -> int:
    """``pairs``: every master, its replica and named streams, what is wrong; 1 if anything is."""
    document = control.source.current(documents.SHARDS).document
    found = pair_health(document, control.mysql, max_lag=args.max_lag)
    if args.json:
        rows = [p.as_json() for p in found]
        out.write(json.dumps(rows, indent=2) + "\n")
    else:
        out.write("".join(p.text() + "\n" for p in found) or "no MySQL master in the map\n")
    return 0 if all(p.healthy and p.streams_healthy for p in found) else 1
