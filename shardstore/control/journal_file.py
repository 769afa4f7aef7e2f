"""A journal in a SQLite file, for ``python -m shardstore --journal FILE``: durable, so a
run killed part way leaves an open entry that ``operations``, ``abort`` and ``resume``
find, from any later command given the same file. (The site journals in its control
database; a run that changes where data lives is refused without a durable journal:
``UnrecordedJournal``.)"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from .plans import JournalEntry, JournalUnavailable, MemoryJournal, OpenOperation, Plan

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    operation TEXT NOT NULL,
    summary TEXT NOT NULL,
    plan TEXT NOT NULL,
    operator TEXT NOT NULL,
    dry_run INTEGER NOT NULL,
    locks TEXT NOT NULL,
    params TEXT NOT NULL,
    steps TEXT NOT NULL DEFAULT '[]',
    ok INTEGER,
    result TEXT NOT NULL DEFAULT '',
    seconds REAL NOT NULL DEFAULT 0
)
"""


class FileJournal:
    """``plans.Journal`` in a SQLite file; an entry's handle is its row id. Each write is
    its own committed transaction, so what a killed run did is on disk."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = f"the journal file {self.path.resolve()}"
        with self._connect() as db:
            db.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def _write(self, sql: str, params: tuple[object, ...]) -> int:
        db = self._connect()
        try:
            with db:
                return int(db.execute(sql, params).lastrowid or 0)
        finally:
            db.close()

    def begin(self, plan: Plan, *, operator: str, dry_run: bool) -> int:
        return self._write(
            "INSERT INTO entries (operation, summary, plan, operator, dry_run, locks, params)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                plan.operation,
                plan.summary,
                json.dumps(plan.lines()),
                operator,
                int(dry_run),
                json.dumps(list(plan.locks)),
                json.dumps(plan.params, default=str),
            ),
        )

    def step(self, entry: int, index: int, name: str, note: str) -> None:
        self._write(
            "UPDATE entries SET steps = json_insert(steps, '$[#]', json_array(?, ?, ?))"
            " WHERE id = ?",
            (index, name, note, entry),
        )

    def finish(self, entry: int, *, ok: bool, result: str, seconds: float) -> None:
        self._write(
            "UPDATE entries SET ok = ?, result = ?, seconds = ? WHERE id = ?",
            (int(ok), result, seconds, entry),
        )

    def open_operations(self) -> list[OpenOperation]:
        db = self._connect()
        try:
            rows = db.execute(
                "SELECT id, operation, summary, operator, locks, params, steps FROM entries"
                " WHERE ok IS NULL AND dry_run = 0 ORDER BY id"
            ).fetchall()
        finally:
            db.close()
        return [
            OpenOperation(
                row_id,
                row_id,
                operation,
                summary,
                operator,
                tuple(json.loads(locks)),
                json.loads(params),
                [(int(i), str(n), str(note)) for i, n, note in json.loads(steps)],
            )
            for row_id, operation, summary, operator, locks, params, steps in rows
        ]


class UnrecordedJournal(MemoryJournal):
    """The journal of a command given none: it shows plans (dry runs) and refuses to run
    one, since a run killed part way would leave nothing to abort or resume."""

    name = "no journal"

    def begin(self, plan: Plan, *, operator: str, dry_run: bool) -> JournalEntry:
        if not dry_run:
            raise JournalUnavailable(
                f"{plan.operation} refused: no journal to record it in (give --journal FILE,"
                " a journal file every operator's command shares, or run it as"
                " `manage.py shardstore`, which journals in the site's control database)"
            )
        return super().begin(plan, operator=operator, dry_run=dry_run)
