"""``manage.py shardstore``: the library's commands on the site's own (cached) store."""

from __future__ import annotations

import io
from typing import Any

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
