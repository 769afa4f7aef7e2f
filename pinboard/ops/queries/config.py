"""The topology page: each config document in force, its history, diffs between versions.

Reads the config source of this deployment (``pinboard.data_plane.open_config``:
the same one ``manage.py shardstore topology`` and the console's actions use). Every
revision is shown masked (``documents.masked``): a version published before shard maps
were refused a password still holds one in the history.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from shardstore.control import documents
from shardstore.control.config_source import ConfigSource, NotPublished, Revision

from ...data_plane import open_config


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add", "remove", "hunk", "same"
    text: str


@dataclass(frozen=True)
class HistoryEntry:
    revision: Revision
    changes: list[DiffLine]  # against the version before it (empty for the first)


@contextmanager
def config_source() -> Iterator[ConfigSource]:
    source = open_config()
    try:
        yield source
    finally:
        source.close()


def shown(revision: Revision) -> Revision:
    """A revision fit to show: the password of any address in it masked."""
    return dataclasses.replace(
        revision,
        document=documents.masked(revision.document),
        reason=documents.masked(revision.reason),
    )


def current(source: ConfigSource, name: str) -> Revision | None:
    try:
        return shown(source.current(name))
    except NotPublished:
        return None


def history(source: ConfigSource, name: str) -> list[Revision]:
    return [shown(revision) for revision in source.history(name)]


def revision(source: ConfigSource, name: str, version: int) -> Revision:
    return shown(source.revision(name, version))


def pretty(revision: Revision) -> str:
    return json.dumps(revision.document, indent=2, sort_keys=True)


def with_changes(revisions: list[Revision], first: int, last: int) -> list[HistoryEntry]:
    """``revisions[first:last]`` (newest first), each with what it changed from the one before
    it: diffs only for the page shown, however long the history."""
    entries = []
    for index in range(first, min(last, len(revisions))):
        before = revisions[index + 1] if index + 1 < len(revisions) else None
        changes = diff_lines(before, revisions[index]) if before is not None else []
        entries.append(HistoryEntry(revisions[index], changes))
    return entries


def diff_lines(a: Revision, b: Revision) -> list[DiffLine]:
    """``documents.diff`` of two versions, each line marked for the page's colours."""
    return classified(documents.diff(a.document, b.document))


def classified(diff: str) -> list[DiffLine]:
    """A unified diff's lines, each marked as added, removed, a hunk header or unchanged."""
    lines = []
    for text in diff.splitlines():
        if text.startswith(("+++", "---")):
            continue
        kind = {"+": "add", "-": "remove", "@": "hunk"}.get(text[:1], "same")
        lines.append(DiffLine(kind, text))
    return lines
