"""The console's failover and split name the replica that takes the shards, as the
command's ``--to`` does: a select of the master's replicas in the map (or the command's
default), refused on the form when it is not one of them, named in the plan shown before
confirming, and carried to the run. (The operations themselves, on real MariaDB:
tests/shardstore/test_two_replicas.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from pinboard.ops.console_actions import run_confirmed
from pinboard.ops.models import JournalEntry
from shardstore.control.file_source import FileSource
from tests.site.ops import (  # noqa: F401
    config_dir_fixture,
    hidden_fields,
    operator_fixture,
    shards_document,
    staff_fixture,
    text,
)
from toolkit.processes import HOST, free_port


@pytest.fixture
def two_masters(config_dir: Path) -> dict[str, Any]:
    """The config source's map: A masters shards 0..7 with replicas A2 and A3, B masters
    8..15 with replica B2; every address is a port nothing listens on (planning a handover
    to a named replica asks no server; running it fails at its first check)."""
    document = shards_document(config_dir)
    hosts = {name: f"mysql://{HOST}:{free_port()}" for name in ("A", "A2", "A3", "B", "B2")}
    ranges = [
        {"range": [0, 7], "master": "A", "replicas": ["A2", "A3"]},
        {"range": [8, 15], "master": "B", "replicas": ["B2"]},
    ]
    assert document["shard_count"] == 16  # the site's, on either plane
    mapped = {**document, "hosts": hosts, "ranges": ranges, "open": [[0, 15]]}
    FileSource(config_dir).publish("shards", mapped, author="test", reason="two masters")
    return shards_document(config_dir)


def plan(client: Client, action: str, data: dict[str, Any], status: int = 200) -> str:
    response = client.post(f"/ops/actions/{action}/", {**data, "step": "plan"})
    assert response.status_code == status, text(response)
    return text(response)


def test_the_forms_offer_the_masters_replicas_and_the_default(
    staff: Client, two_masters: dict[str, Any]
) -> None:
    form = text(staff.get("/ops/actions/failover/?host=A"))
    assert '<select name="to"' in form
    assert '<option value="" selected>default: the replica that received the most</option>' in form
    assert '<option value="A2">A2</option>' in form and '<option value="A3">A3</option>' in form
    assert 'value="B2"' not in form  # another master's replica
    every = text(staff.get("/ops/actions/split/"))  # no host yet: every master's, by master
    assert "default: the first replica the map names" in every
    assert (
        '<optgroup label="replicas of A">' in every and '<optgroup label="replicas of B">' in every
    )
    assert every.index('value="A3"') < every.index('value="B2"')


def test_a_failover_to_a_chosen_replica_plans_and_runs_the_handover_to_it(
    staff: Client, two_masters: dict[str, Any], config_dir: Path
) -> None:
    page = plan(staff, "failover", {"host": "A", "to": "A3"})
    assert "Plan: fail over A to A3 (shards 0..7)" in page
    assert "Takes the shards: <code>A3</code>, the replica chosen." in page
    assert "make A2, A replicate from A3" in page
    assert hidden_fields(page)["to"] == "A3"  # what "Run it" posts back
    dry = JournalEntry.objects.get()
    assert dry.dry_run and dry.params["replica"] == "A3"
    response = staff.post("/ops/actions/failover/", {**hidden_fields(page), "step": "run"})
    assert response.status_code == 302, text(response)
    run = JournalEntry.objects.get(dry_run=False)  # planned again from the same choice
    assert run.summary == "fail over A to A3 (shards 0..7)" and run.params["replica"] == "A3"
    assert run.ok is False and "A2" in run.result  # its first check reaches no server
    assert shards_document(config_dir) == two_masters  # nothing published


def test_the_default_failover_and_split_still_plan(
    staff: Client, two_masters: dict[str, Any]
) -> None:
    # Neither replica answers: the one that received the most is the map's first.
    failover = plan(staff, "failover", {"host": "A", "to": ""})
    assert "Plan: fail over A to A2 (shards 0..7)" in failover
    assert "(default: the replica that received the most)" in failover
    split = plan(staff, "split", {"host": "A"})
    assert "Plan: split A: shards 4..7 to A2, 0..3 stay" in split
    assert "(default: the first replica the map names)" in split


def test_a_split_to_a_chosen_replica_hands_it_the_moving_half(
    staff: Client, two_masters: dict[str, Any]
) -> None:
    page = plan(staff, "split", {"host": "A", "to": "A3"})
    assert "Plan: split A: shards 4..7 to A3, 0..3 stay" in page
    assert "Takes the shards: <code>A3</code>, the replica chosen." in page
    assert JournalEntry.objects.get().params["replica"] == "A3"


@pytest.mark.parametrize("action", ["failover", "split"])
@pytest.mark.parametrize("to", ["nohost", "B2", "A"])
def test_a_replica_the_map_does_not_name_for_the_host_is_refused_on_the_form(
    staff: Client, two_masters: dict[str, Any], config_dir: Path, action: str, to: str
) -> None:
    page = plan(staff, action, {"host": "A", "to": to}, status=400)
    assert f"{to} is not a replica of A in the shard map (its replicas: A2, A3)" in page
    assert 'class="field-error"' in page
    assert not JournalEntry.objects.exists()
    assert shards_document(config_dir) == two_masters


def test_a_replica_for_a_host_that_masters_nothing_and_a_bad_name_are_refused(
    staff: Client, two_masters: dict[str, Any]
) -> None:
    page = plan(staff, "failover", {"host": "A2", "to": "A3"}, status=400)
    assert "A3 is not a replica of A2 in the shard map (A2 masters no range with replicas)" in page
    assert 'class="field-error"' in plan(staff, "split", {"host": "A", "to": "a b"}, status=400)
    assert not JournalEntry.objects.exists()


def test_an_emergency_failover_takes_no_chosen_replica(
    staff: Client, two_masters: dict[str, Any]
) -> None:
    data = {"host": "A", "to": "A3", "emergency": "on"}
    page = plan(staff, "failover", data, status=400)
    assert "a replica is chosen for a planned failover only" in page
    assert not JournalEntry.objects.exists()


def test_a_confirmed_plan_whose_replica_was_changed_is_refused_and_runs_nothing(
    staff: Client, two_masters: dict[str, Any], config_dir: Path
) -> None:
    fields = hidden_fields(plan(staff, "failover", {"host": "A", "to": "A3"}))
    response = staff.post("/ops/actions/failover/", {**fields, "to": "B2", "step": "run"})
    assert response.status_code == 400
    assert "B2 is not a replica of A" in text(response)
    assert not JournalEntry.objects.filter(dry_run=False).exists()
    assert shards_document(config_dir) == two_masters


def test_a_run_whose_replica_left_the_map_since_it_was_confirmed_changes_nothing(
    staff: Client, two_masters: dict[str, Any], config_dir: Path
) -> None:
    """The worker plans the run again from the map then in force: a replica no longer
    named for the host fails the run before any step."""
    page = plan(staff, "split", {"host": "A", "to": "A3"})
    [one, other] = two_masters["ranges"]
    fewer = {**two_masters, "ranges": [{**one, "replicas": ["A2"]}, other]}
    FileSource(config_dir).publish("shards", fewer, author="test", reason="A3 gone")
    entry = JournalEntry.objects.get(pk=run_confirmed("split", {"host": "A", "to": "A3"}, "ops_ada", "x"))  # fmt: skip
    assert entry.ok is False and entry.steps == []
    assert "A3 is not a replica of A in the shard map (its replicas: A2)" in entry.result
    assert "Plan: split A" in page and shards_document(config_dir)["version"] == 3
