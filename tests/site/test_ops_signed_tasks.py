"""The console's tasks trust no one who merely reaches the broker: a message runs only the
request the web view signed for it, within minutes of its signing, once, and only while
its operator still holds the role it takes. Messages are run here as a worker runs them
(``Task.apply``), from what the views queued (``queued``) or from forged bodies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django import forms
from django.contrib.auth.models import Group
from django.core import signing
from django.test import Client

from pinboard.ops import action_views, operation_views
from pinboard.ops.console_actions import ACTIONS, Action
from pinboard.ops.models import JournalEntry
from pinboard.ops.tasks import end_operation, run_action
from shardstore.control.plans import Plan, Step
from tests.site.ops import (  # noqa: F401
    clock_fixture,
    config_dir_fixture,
    hidden_fields,
    operator_fixture,
    shards_document,
    staff_fixture,
)
from tests.site.test_ops_actions import confirm, plan
from tests.site.test_ops_operations import PASSWORD, left_open

CLOSE = {"first": 0, "last": 7}  # close-range: an action of the destructive role


@pytest.fixture(name="queued")
def queued_fixture(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """What the views hand to the broker, held there: each message's arguments."""
    sent: list[tuple[Any, ...]] = []

    class Broker:
        def delay(self, *args: Any) -> None:  # not an EagerResult: "queued for a worker"
            sent.append(args)

    monkeypatch.setattr(action_views, "run_action", Broker())
    monkeypatch.setattr(operation_views, "end_operation", Broker())
    return sent


@pytest.fixture(name="tally")
def tally_fixture() -> Iterator[list[int]]:
    """A console action whose every run adds one to the list, and whose plan stays the same."""
    runs: list[int] = []

    class NoteForm(forms.Form):
        note = forms.CharField()

    def planner(made: Any, data: dict[str, Any]) -> Plan:
        count = Step("count one", (), lambda: f"run {runs.append(1) or len(runs)}")
        return Plan("tally", f"tally: {data['note']}", [count])

    ACTIONS["tally"] = Action("tally", "Tally", "counts its runs", NoteForm, planner)
    yield runs
    del ACTIONS["tally"]


def as_worker(task: Any, args: tuple[Any, ...]) -> Any:
    """Run a message as a worker does: what the task raises is its failure, not ours."""
    return task.apply(args=args, throw=False)


def refusals() -> list[JournalEntry]:
    return list(JournalEntry.objects.filter(dry_run=False).order_by("id"))


def test_a_forged_message_runs_nothing_and_changes_nothing(staff: Client, config_dir: Path) -> None:
    confirmed = hidden_fields(plan(staff, "close-range", CLOSE))["digest"]
    data = {"first": "0", "last": "7"}
    asked = {"task": "action", "operator": "ops_ada", "name": "close-range", "data": data}
    asked |= {"digest": confirmed, "nonce": "0f" * 16}
    other_key = signing.TimestampSigner(key="not-the-sites-key", salt="pinboard.ops.signed_tasks")
    forged = [
        ("close-range", data, "ops_ada", confirmed),  # the operator's name, as it once took
        (json.dumps(asked),),  # the request, not signed
        (other_key.sign_object(asked),),  # signed with another key
        (signing.dumps(asked),),  # the site's key, under another salt (another purpose)
        (None,),
    ]
    for args in forged:
        as_worker(run_action, args)
    entry = left_open()
    for args in [(entry.pk, "close", "ops_ada"), (json.dumps({**asked, "task": "ending"}),)]:
        as_worker(end_operation, args)
    assert shards_document(config_dir)["version"] == 1  # nothing published
    entry.refresh_from_db()
    assert entry.ok is None  # still open
    refused = [e for e in refusals() if e.pk != entry.pk]
    assert len(refused) == 5  # each forged request of the right shape, journaled
    for each in refused:
        assert each.ok is False and each.steps == [] and each.operator == "(no valid signature)"
        assert each.result.startswith("bad signature")


def test_a_request_that_waited_past_its_expiry_is_refused(
    staff: Client,
    config_dir: Path,
    queued: list[tuple[Any, ...]],
    clock: list[float],
    tally: list[int],
) -> None:
    page = plan(staff, "tally", {"note": "n"})
    confirm(staff, "tally", page)
    confirm(staff, "tally", page)  # two messages, signed at once
    early, late = queued
    clock[0] += 5 * 60 - 2
    assert JournalEntry.objects.get(pk=as_worker(run_action, early).result).ok
    clock[0] += 3  # past 5 minutes: the sudo window the operator confirmed in
    entry = JournalEntry.objects.get(pk=as_worker(run_action, late).result)
    assert entry.ok is False and entry.steps == [] and entry.operator == "ops_ada"
    assert entry.result.startswith("expired") and tally == [1]


def test_a_request_lives_no_longer_than_a_shorter_sudo_window(
    staff: Client,
    config_dir: Path,
    queued: list[tuple[Any, ...]],
    clock: list[float],
    settings: Any,
) -> None:
    settings.OPS_REAUTH_SECONDS = 60
    confirm(staff, "close-range", plan(staff, "close-range", CLOSE))
    clock[0] += 62
    entry = JournalEntry.objects.get(pk=as_worker(run_action, queued[0]).result)
    assert entry.ok is False and entry.result.startswith("expired")
    assert shards_document(config_dir)["version"] == 1


@pytest.mark.parametrize("change", ["role", "inactive", "staff", "deleted"])
def test_an_operator_who_lost_the_role_between_confirm_and_run_is_refused(
    staff: Client, config_dir: Path, queued: list[tuple[Any, ...]], operator: Any, change: str
) -> None:
    confirm(staff, "close-range", plan(staff, "close-range", CLOSE))
    lose(operator, change)
    entry = JournalEntry.objects.get(pk=as_worker(run_action, queued[0]).result)
    assert entry.ok is False and entry.steps == [] and entry.operator == "ops_ada"
    assert "ops_ada" in entry.result and entry.operation == "close-range"
    if change == "role":
        assert entry.result == "role gone: ops_ada no longer holds the destructive role"
    assert shards_document(config_dir)["version"] == 1


def lose(operator: Any, change: str) -> None:
    if change == "role":
        operator.groups.remove(Group.objects.get(name="destructive"))
    elif change == "deleted":
        operator.delete()
    else:
        setattr(operator, "is_active" if change == "inactive" else "is_staff", False)
        operator.save()


def test_an_operator_who_lost_the_role_does_not_end_an_operation(
    staff: Client, config_dir: Path, queued: list[tuple[Any, ...]], operator: Any
) -> None:
    entry = left_open()
    staff.post(f"/ops/operations/{entry.pk}/close/", {"password": PASSWORD})
    lose(operator, "role")
    said = as_worker(end_operation, queued[0]).result
    assert said == "FAILED: role gone: ops_ada no longer holds the destructive role"
    entry.refresh_from_db()
    assert entry.ok is None  # still open
    refused = JournalEntry.objects.get(operation="close")
    assert refused.ok is False and f"close operation {entry.pk}" in refused.summary


def test_a_replayed_request_runs_once(
    staff: Client, config_dir: Path, queued: list[tuple[Any, ...]], tally: list[int]
) -> None:
    confirm(staff, "tally", plan(staff, "tally", {"note": "n"}))
    first, again = (as_worker(run_action, queued[0]).result for _ in range(2))
    assert tally == [1]
    assert JournalEntry.objects.get(pk=first).ok
    replayed = JournalEntry.objects.get(pk=again)
    assert replayed.ok is False and replayed.steps == []
    assert replayed.result == "replayed: this signed request was used already"
    entry = left_open()
    staff.post(f"/ops/operations/{entry.pk}/close/", {"password": PASSWORD})
    closed, replay = (as_worker(end_operation, queued[1]).result for _ in range(2))
    assert "closed by ops_ada" in closed
    assert replay == "FAILED: replayed: this signed request was used already"


def test_a_request_signed_for_an_action_does_not_end_an_operation(
    staff: Client, config_dir: Path, queued: list[tuple[Any, ...]], tally: list[int]
) -> None:
    confirm(staff, "tally", plan(staff, "tally", {"note": "n"}))
    entry = left_open()
    said = as_worker(end_operation, queued[0]).result
    assert said.startswith("FAILED: signed for another task") and tally == []
    entry.refresh_from_db()
    assert entry.ok is None
