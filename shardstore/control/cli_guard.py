"""``shardstore guard``: be one of the guards (``run``), or say what the guard did
(``status``); ``pause`` and ``unpause`` are operations, planned and journaled (cli.py)."""

from __future__ import annotations

import argparse
import json
import socket
import time
from dataclasses import asdict
from typing import Any, TextIO

from ..replicas import MOST, WANTED
from .context import Control
from .guard import (
    CONFIRM_SECONDS,
    COOL_DOWN_SECONDS,
    LEADER,
    REPLACE_AFTER_SECONDS,
    Guard,
    keep_watch,
    status,
)


def add_parser(commands: Any) -> None:
    guard = commands.add_parser("guard", help="fail dead masters over, replace dead replicas, add missing ones, with no person (or pause it)")  # fmt: skip
    verbs = guard.add_subparsers(dest="verb", required=True)
    run = verbs.add_parser("run", help="be one of the guards: the one holding its lock acts")
    run.add_argument("--instance", default=socket.gethostname(), help="this guard's name")
    run.add_argument("--interval", type=float, default=1.0, help="seconds between passes")
    run.add_argument("--confirm", type=float, default=CONFIRM_SECONDS, help="seconds a master goes unanswered first")  # fmt: skip
    run.add_argument("--cool-down", type=float, default=COOL_DOWN_SECONDS, help="seconds after a range's recovery in which another waits for a person")  # fmt: skip
    run.add_argument("--replace-after", type=float, default=REPLACE_AFTER_SECONDS, help="seconds a replica is dead or broken, or a range short of replicas, before a spare is rebuilt as one")  # fmt: skip
    run.add_argument("--replicas", type=int, default=WANTED, choices=range(MOST + 1), metavar="N", help=f"replicas a range should have: one short gets a spare (default {WANTED}; 0: never)")  # fmt: skip
    status = verbs.add_parser("status", help="paused or not, and its last decisions")
    status.add_argument("--json", action="store_true")
    for verb, text in (("pause", "the guard decides but fails nothing over"), ("unpause", "it acts again")):  # fmt: skip
        p = verbs.add_parser(verb, help=text)
        p.add_argument("--reason", required=True)
        p.add_argument("--dry-run", action="store_true")


def guard_of(args: argparse.Namespace, control: Control) -> Guard:
    confirm = getattr(args, "confirm", CONFIRM_SECONDS)
    cool_down = getattr(args, "cool_down", COOL_DOWN_SECONDS)
    replace_after = getattr(args, "replace_after", REPLACE_AFTER_SECONDS)
    wanted = getattr(args, "replicas", WANTED)
    return Guard(control, confirm_seconds=confirm, cool_down=cool_down, replace_after=replace_after, wanted=wanted)  # fmt: skip


def handle(args: argparse.Namespace, control: Control, out: TextIO) -> int:
    """``guard run`` (until stopped) and ``guard status``."""
    guard = guard_of(args, control)
    if args.verb == "run":

        def say(line: str) -> None:
            out.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
            out.flush()

        keep_watch(guard, instance=args.instance, interval=args.interval, say=say)
        return 0
    watch = status(control.source)
    paused = bool(watch.pause.get("paused"))
    if args.json:
        state = {"paused": paused, "pause": watch.pause, "leader": watch.leader, "decisions": [asdict(d) for d in watch.decisions]}  # fmt: skip
        out.write(json.dumps(state, indent=2) + "\n")
        return 0
    out.write(f"the guard is {'PAUSED' if paused else 'watching'} (its lock: {LEADER})\n")
    if watch.leader:
        ago = time.time() - float(watch.leader["at"])
        out.write(f"active guard: {watch.leader['instance']}, its last pass {ago:.0f}s ago\n")
    for d in watch.decisions:
        out.write(f"{d.when}  {d.kind} {d.host}: {d.evidence}\n")
    return 0
