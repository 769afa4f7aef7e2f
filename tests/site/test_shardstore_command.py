"""``manage.py shardstore``: the library's commands on the site's own (cached) store."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command

from pinboard.data_plane import cached_store
from shardstore import shard_of
from shardstore.mappings import _insert


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("shardstore", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_reconcile_checks_and_repairs_through_the_cache(cast: dict[str, Any]) -> None:
    bob, pin = cast["bob"], cast["pin"]
    store = cached_store()
    liked_by = store.mapping("pin_liked_by_users")
    assert liked_by.page(pin).ids == []  # cached: no likes yet
    # A like whose process died after the forward row: no inverse, nothing invalidated.
    with store.store.session(shard_of(bob["id"]), write=True) as session:
        _insert(session, "user_likes_pins", bob["id"], pin, 1)

    check = run("reconcile", "user_likes_pins", "--check")
    assert "found 1 missing inverse" in check
    assert liked_by.page(pin).ids == []  # a check changes nothing

    repair = run("reconcile", "user_likes_pins")
    assert "repaired 1 missing inverse" in repair
    assert liked_by.page(pin).ids == [bob["id"]]  # the cached list was refreshed
    assert liked_by.count(pin) == 1
    assert "repaired 0 missing" in run("reconcile", "user_likes_pins")


def test_every_subcommand_runs_on_the_embedded_default() -> None:
    assert "shards ready" in run("init")
    assert '"shard_count"' in run("topology")
    assert "rows checked" in run("reconcile", "--check")


def test_operations_lists_a_run_left_open_and_abort_ends_it(db: Any) -> None:
    """A run whose process died (its journal entry open, its locks free) is listed, blocks
    the operations that share a lock with it, and is ended by ``abort``."""
    import json

    from django.core.management.base import CommandError

    from pinboard.ops.control import DatabaseJournal, control
    from pinboard.ops.models import JournalEntry
    from shardstore.control.close_range import plan_close_range
    from shardstore.control.plans import run as run_plan

    made = control("ada")
    plan = plan_close_range(made.source, first=0, last=0, author="ada")
    dead = DatabaseJournal().begin(plan, operator="ada", dry_run=False)  # then kill -9

    listed = json.loads(run("operations", "--json"))
    assert [(o["id"], o["state"], o["after_step"]) for o in listed] == [(dead.pk, "left open", 0)]
    assert "@config" in listed[0]["locks"]
    assert f"{dead.pk}  left open  after step 0  ada: close shards" in run("operations")
    blocked = run_plan(
        plan_close_range(made.source, first=0, last=0, author="bob"),
        journal=made.journal,
        locks=made.locks,
        operator="bob",
    )
    assert not blocked.ok and f"operation {dead.pk} (close shards" in blocked.error

    out = io.StringIO()
    with pytest.raises(CommandError):  # a close-range is one publish: nothing to plan again
        call_command("shardstore", "abort", str(dead.pk), stdout=out, stderr=io.StringIO())
    assert "cannot be planned again" in out.getvalue()
    assert JournalEntry.objects.get(pk=dead.pk).ok is None  # still open: nothing guessed
    assert "closed by" in run("abort", str(dead.pk), "--close")
    assert run("operations") == "no open operation\n"
