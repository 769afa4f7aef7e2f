"""The console's actions: a dry-run plan that changes nothing and is journaled as one, a
confirmed run that changes the config and journals its steps, and errors shown on the form."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from django.core import signing
from django.test import Client

from pinboard.data_plane import cached_store
from pinboard.ops.console_actions import ACTIONS, Action, register
from pinboard.ops.control import progress_note
from pinboard.ops.models import JournalEntry
from pinboard.users.actions import sign_up
from pinboard.users.queries import get_user
from shardstore import Topology, shard_of
from shardstore.control.file_source import FileSource
from shardstore.control.locks import FileLocks
from tests.site.conftest import PLANE
from tests.site.ops import (  # noqa: F401
    config_dir_fixture,
    hidden_fields,
    operator_fixture,
    shards_document,
    staff_fixture,
    text,
)


def plan(client: Client, action: str, data: dict[str, Any], status: int = 200) -> str:
    response = client.post(f"/ops/actions/{action}/", {**data, "step": "plan"})
    assert response.status_code == status, text(response)
    return text(response)


def confirm(client: Client, action: str, plan_page: str) -> Any:
    """Press "Run it" on a plan page: post back what its confirm form holds."""
    fields = hidden_fields(plan_page)
    return client.post(f"/ops/actions/{action}/", {**fields, "step": "run"})


def test_a_dry_run_changes_nothing_and_is_journaled_as_a_dry_run(
    staff: Client, config_dir: Path
) -> None:
    before = shards_document(config_dir)
    edited = {**before, "open": [[0, 7]]}
    page = plan(
        staff, "publish", {"document": "shards", "body": json.dumps(edited), "reason": "fewer"}
    )
    assert "publish shard map v2: fewer" in page
    assert '<span class="remove">' in page and '<span class="add">' in page  # the diff
    assert "Run it" in page
    assert shards_document(config_dir) == before  # nothing published
    entry = JournalEntry.objects.get()
    assert entry.dry_run and entry.operator == "ops_ada" and entry.operation == "publish"
    assert entry.plan == ["1. publish shard map v2"] and entry.steps == []


def test_a_confirmed_action_changes_the_config_and_journals_its_steps(
    staff: Client, config_dir: Path
) -> None:
    page = plan(staff, "close-range", {"first": 0, "last": 7})
    assert shards_document(config_dir)["open"] == [[0, 15]]
    response = confirm(staff, "close-range", page)
    assert response.status_code == 302
    document = shards_document(config_dir)
    assert document["open"] == [[8, 15]] and document["version"] == 2
    run = JournalEntry.objects.get(dry_run=False)
    assert response["Location"] == f"/ops/journal/{run.pk}/"
    assert run.ok and run.operator == "ops_ada" and run.seconds is not None
    assert run.steps == [
        [1, "publish shard map v2: open [[8, 15]]", "shard map version 2 published"]
    ]
    entry_page = text(staff.get(response["Location"]))
    assert "shard map version 2 published" in entry_page and "Done: close shards 0..7" in entry_page
    history = FileSource(config_dir).history("shards")
    assert history[0].author == "ops_ada" and "close shards 0..7" in history[0].reason


def test_a_publish_then_a_rollback(staff: Client, config_dir: Path) -> None:
    form = text(staff.get("/ops/actions/publish/?document=shards"))
    assert "&quot;shard_count&quot;" in form  # the form starts from the document in force
    edited = {**shards_document(config_dir), "open": [[4, 5]]}
    data = {"document": "shards", "body": json.dumps(edited), "reason": "try", "expect_version": 1}
    assert confirm(staff, "publish", plan(staff, "publish", data)).status_code == 302
    assert shards_document(config_dir)["open"] == [[4, 5]]
    rollback = plan(staff, "rollback", {"document": "shards", "version": 1, "reason": "undo"})
    assert confirm(staff, "rollback", rollback).status_code == 302
    document = shards_document(config_dir)
    assert document["open"] == [[0, 15]] and document["version"] == 3


def test_a_plan_that_changed_since_it_was_shown_is_shown_again_not_run(
    staff: Client, config_dir: Path
) -> None:
    page = plan(staff, "close-range", {"first": 0, "last": 3})
    # Another operator publishes meanwhile: the confirmed plan (v2) is no longer the plan.
    source = FileSource(config_dir)
    source.publish("shards", shards_document(config_dir), author="other", reason="meanwhile")
    response = confirm(staff, "close-range", page)
    assert response.status_code == 200
    assert "The plan changed since you saw it" in text(response)
    assert "publish shard map v3" in text(response)
    assert shards_document(config_dir)["open"] == [[0, 15]]  # nothing ran
    assert not JournalEntry.objects.filter(dry_run=False).exists()


def test_planner_errors_are_shown_on_the_form(staff: Client, config_dir: Path) -> None:
    closed = plan(staff, "close-range", {"first": 0, "last": 15}, status=400)
    assert "would leave none for new users" in closed
    stale = {"document": "shards", "body": json.dumps(shards_document(config_dir)), "reason": "r"}
    conflict = plan(staff, "publish", {**stale, "expect_version": 7}, status=409)
    assert "version 1 is current, not 7" in conflict
    unknown = plan(staff, "host-service", {"host": "nohost", "service": "out"}, status=400)
    assert "no host nohost in the shard map" in unknown
    invalid = {"document": "shards", "body": json.dumps({"shard_count": 3}), "reason": "r"}
    assert "hosts must be a non-empty object" in plan(staff, "publish", invalid, status=400)
    never = plan(
        staff, "rollback", {"document": "shards", "version": 42, "reason": "r"}, status=400
    )
    assert "version 42 was never published" in never
    nothing = plan(
        staff, "cache-server", {"pool": "pins", "server": "h:1", "change": "add"}, status=400
    )
    assert "nothing published" in nothing
    assert not JournalEntry.objects.exists()  # a refused plan is not journaled
    assert shards_document(config_dir)["version"] == 1


def test_bad_input_is_refused_with_the_field_named(staff: Client, config_dir: Path) -> None:
    cases = {
        "publish": {"document": "shards", "body": "{not json", "reason": "r"},
        "close-range": {"first": "zero", "last": 3},
        "open-range": {"count": 0, "master": "a b", "master_address": "x"},
        "cache-server": {"pool": "nope", "server": "no-port", "change": "add"},
        "redis-move": {"first": 0, "last": 99999, "instance": "r2"},
    }
    for action, data in cases.items():
        page = plan(staff, action, data, status=400)
        assert 'class="field-error"' in page, action
    deep = {"document": "shards", "body": "[" * 5000 + "]" * 5000, "reason": "r"}
    assert "nested more than 32 deep" in plan(staff, "publish", deep, status=400)
    not_object = {"document": "shards", "body": "[1, 2]", "reason": "r"}
    assert "a document is a JSON object" in plan(staff, "publish", not_object, status=400)
    assert staff.get("/ops/actions/nosuchaction/").status_code == 404
    assert staff.post("/ops/actions/nosuchaction/", {"step": "plan"}).status_code == 404
    assert shards_document(config_dir)["version"] == 1


def test_a_confirmed_action_runs_on_a_worker_not_in_the_request(
    staff: Client, config_dir: Path, redis_server: Any
) -> None:
    """With a broker, the request only queues the run: a request signed for the worker (no
    password in it); a worker then plans it again and runs it, once: the web worker's life
    does not bound it."""
    import redis

    from pinboard import celery_app
    from pinboard.ops.tasks import run_action
    from tests.site.conftest import use_broker

    broker = f"{redis_server.url.rsplit('/', 1)[0]}/14"
    queue = redis.Redis.from_url(broker)
    queue.delete("celery")
    eager, previous = celery_app.conf.task_always_eager, celery_app.conf.broker_url
    celery_app.conf.task_always_eager = False
    use_broker(broker)
    try:
        page = plan(staff, "close-range", {"first": 0, "last": 7})
        response = confirm(staff, "close-range", page)
        assert response.status_code == 302 and response["Location"] == "/ops/journal/"
        assert shards_document(config_dir)["open"] == [[0, 15]]  # nothing ran yet
        assert not JournalEntry.objects.filter(dry_run=False).exists()
        [message] = [json.loads(m) for m in queue.lrange("celery", 0, -1)]
        assert message["headers"]["task"] == run_action.name
        assert "password" not in json.dumps(message)
    finally:
        celery_app.conf.task_always_eager = eager
        use_broker(previous)
        queue.delete("celery")
        queue.close()
    args, _, _ = json.loads(base64.b64decode(message["body"]))
    [token] = args  # the operator, action, form and plan's digest, signed
    asked = signing.loads(token, salt="pinboard.ops.signed_tasks")
    assert (asked["operator"], asked["name"], asked["data"]) == ("ops_ada", "close-range", {"first": "0", "last": "7"})  # fmt: skip
    entry = JournalEntry.objects.get(pk=run_action.apply(args).get())  # as the worker runs it
    assert entry.ok and entry.operator == "ops_ada"
    assert shards_document(config_dir)["open"] == [[8, 15]]
    again = JournalEntry.objects.get(pk=run_action.apply(args).get())  # redelivered: not rerun
    assert again.ok is False and again.result.startswith("replayed")
    assert shards_document(config_dir)["open"] == [[8, 15]]


def test_a_busy_host_is_shown_and_the_plan_can_be_confirmed_again(
    staff: Client, config_dir: Path
) -> None:
    host = next(iter(cached_store().topology.hosts))
    document = shards_document(config_dir)
    FileSource(config_dir).publish(
        "shards",
        {**document, "hosts": {**document["hosts"], "spare1": document["hosts"][host]}},
        author="test",
        reason="a spare",
    )
    page = plan(staff, "host-service", {"host": "spare1", "service": "out"})
    with FileLocks(config_dir / "locks").hold(["spare1"], owner="someone else: drill"):
        busy = confirm(staff, "host-service", page)
    assert busy.status_code == 409
    assert "host spare1 is locked by: someone else: drill" in text(busy)
    assert "out_of_service" not in shards_document(config_dir)
    assert confirm(staff, "host-service", text(busy)).status_code == 302  # the lock is gone
    assert shards_document(config_dir)["out_of_service"] == ["spare1"]


def test_a_redis_move_is_planned_with_its_steps_and_hosts(staff: Client, config_dir: Path) -> None:
    redis = {
        "version": 1,
        "instances": {"redis1": "memory://ops-plan"},
        "ranges": [{"range": [0, 8191], "instance": "redis1"}],
    }
    FileSource(config_dir).publish("redis", redis, author="test", reason="one instance")
    page = plan(
        staff, "redis-move", {"first": 0, "last": 99, "instance": "redis2", "url": "memory://ops-2"}
    )
    assert "move virtual shards 0..99 from redis1 to redis2" in page
    assert "copy the keys of virtual shards 0..99 from redis1 to redis2" in page
    assert "<code>redis1</code>, <code>redis2</code>" in page
    assert JournalEntry.objects.get().dry_run


def test_failover_and_split_can_plug_in_as_two_more_actions() -> None:
    """The registry is the whole mechanism: a new action is a form and a planner."""
    assert set(ACTIONS) >= {"open-range", "close-range", "host-service", "cache-server",
                            "redis-move", "publish", "rollback"}  # fmt: skip
    with pytest.raises(ValueError, match="two console actions"):
        register(
            Action("publish", "again", "", ACTIONS["publish"].form, ACTIONS["publish"].planner)
        )


# -- open a new range --------------------------------------------------------------


@pytest.fixture
def restore_site_topology() -> Any:
    """The site's store swapped to a new map by a test is put back afterwards."""
    store = cached_store().store
    before = store.topology
    yield store
    store.set_topology(before)


def test_open_range_creates_the_shards_and_new_sign_ups_land_there(
    staff: Client, config_dir: Path, tmp_path: Path, make_user: Any, restore_site_topology: Any
) -> None:
    if PLANE == "servers":
        host = cached_store().topology.hosts[next(iter(cached_store().topology.hosts))]
        address = host  # the site's MariaDB, under a new host name: databases db00016..
    else:
        address = f"sqlite://{tmp_path / 'new-host'}"
    existing = make_user("existing")
    data = {"count": 16, "master": "NewHost01", "master_address": address}
    page = plan(staff, "open-range", data)
    assert "create databases db00016..db00031 and their tables" in page
    assert "<code>NewHost01</code>" in page
    response = confirm(staff, "open-range", page)
    assert response.status_code == 302, text(response)

    document = shards_document(config_dir)
    assert document["shard_count"] == 32 and document["open"] == [[16, 31]]
    assert {"range": [16, 31], "master": "NewHost01"} in document["ranges"]
    entry = JournalEntry.objects.get(dry_run=False)
    notes = [step[2] for step in entry.steps]
    assert entry.ok and "16 shards ready on NewHost01" in notes
    if PLANE == "servers":  # a MySQL master is checked and opened first
        assert notes[:2] == ["ready", "NewHost01 writable"]

    # Every process swaps in the new map (here, by hand: the tests' plane follows nothing).
    store = restore_site_topology
    store.set_topology(Topology.from_json(document))
    assert all(16 <= store.new_user_shard() <= 31 for _ in range(50))
    newcomer = sign_up("newcomer_" + existing["username"], "n@example.com", "plum-orchard-42")
    assert 16 <= shard_of(newcomer["id"]) <= 31
    assert get_user(newcomer["id"])["username"] == newcomer["username"]  # its shard works
    # Existing users are untouched: same ID, same shard, still read.
    assert shard_of(existing["id"]) < 16
    assert get_user(existing["id"])["username"] == existing["username"]


def test_a_rebuild_is_planned_from_the_console_and_a_master_is_refused(
    staff: Client, config_dir: Path
) -> None:
    """The rebuild action (which wipes a host: the destructive role's) refuses a master and
    a host the map does not have, on its form, before anything is journaled."""
    assert "rebuild" in ACTIONS
    master = shards_document(config_dir)["ranges"][0]["master"]
    data = {"max_threads_running": 32}
    page = plan(staff, "rebuild", {**data, "host": master}, status=400)
    assert f"{master} is the master of shards" in page and "never rebuilt" in page
    assert "no host nohost" in plan(staff, "rebuild", {**data, "host": "nohost"}, status=400)
    assert "max_threads_running" in plan(staff, "rebuild", {"host": master}, status=400)
    assert not JournalEntry.objects.exists()


def test_a_running_rebuild_shows_its_copy_progress(staff: Client, config_dir: Path) -> None:
    running = JournalEntry.objects.create(operation="rebuild", summary="rebuild B", params={"host": "B"}, operator="ada")  # fmt: skip
    other = JournalEntry.objects.create(operation="rebuild", summary="rebuild C", params={"host": "C"}, operator="ada")  # fmt: skip
    progress_note("rebuild", "B", "shards 4/8")
    assert "last progress: shards 4/8" in text(staff.get(f"/ops/journal/{running.pk}/"))
    assert JournalEntry.objects.get(pk=other.pk).result == ""
