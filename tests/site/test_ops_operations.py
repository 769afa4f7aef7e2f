"""Operations left open in the console: listed with their state, ended (abort, resume,
close) as ``shardstore abort``/``resume`` end them, only with the destructive role and the
operator's password given again, on a worker (eager here: no broker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.test import Client

from pinboard.ops import reauth
from pinboard.ops.models import JournalEntry
from shardstore.control.locks import FileLocks
from tests.site.ops import (  # noqa: F401
    config_dir_fixture,
    operator_fixture,
    staff_account,
    staff_fixture,
    text,
)

PASSWORD = "tangerine-lantern-77"


def left_open(**fields: Any) -> JournalEntry:
    """An entry whose run died after its first step."""
    made: JournalEntry = JournalEntry.objects.create(
        operation="split",
        summary="split spare1 onto spare2",
        locks=["@config", "spare1", "spare2"],
        operator="ops_bob",
        steps=[[1, "check spare2 replicates from spare1", "done"]],
        **fields,
    )
    return made


def test_an_open_operation_is_listed_and_closed_with_the_password(
    staff: Client, config_dir: Path
) -> None:
    entry = left_open()
    session = staff.session
    session[reauth.CONFIRMED_AT] = 0.0  # the log-in's password is long past
    session.save()
    page = text(staff.get("/ops/operations/"))
    assert "split spare1 onto spare2" in page and "left open" in page
    assert f"/ops/operations/{entry.pk}/abort/" in page and 'name="password"' in page

    refused = staff.post(f"/ops/operations/{entry.pk}/close/", {"password": "wrong"}, follow=True)
    assert "Give your password again" in text(refused)
    entry.refresh_from_db()
    assert entry.ok is None  # still open

    closed = staff.post(f"/ops/operations/{entry.pk}/close/", {"password": PASSWORD}, follow=True)
    assert "closed by ops_ada after step 1, nothing undone" in text(closed)
    entry.refresh_from_db()
    assert entry.ok is False and "closed by ops_ada" in entry.result
    assert "No open operation." in text(staff.get("/ops/operations/"))


def test_an_operation_that_cannot_be_planned_again_is_not_aborted(
    staff: Client, config_dir: Path
) -> None:
    entry = left_open()  # no "base" in its params: it cannot be planned again
    said = staff.post(f"/ops/operations/{entry.pk}/abort/", {"password": PASSWORD}, follow=True)
    assert "FAILED: operation" in text(said) and "cannot be planned again" in text(said)
    entry.refresh_from_db()
    assert entry.ok is None


def test_a_running_operation_is_not_ended(staff: Client, config_dir: Path) -> None:
    entry = left_open()
    with FileLocks(config_dir / "locks").hold(["spare1"], owner="its run"):
        assert "running" in text(staff.get("/ops/operations/"))
        said = staff.post(f"/ops/operations/{entry.pk}/close/", {"password": PASSWORD}, follow=True)  # fmt: skip
    assert "is still running: its locks are held" in text(said)
    entry.refresh_from_db()
    assert entry.ok is None


def test_only_the_destructive_role_ends_an_operation(client: Client, config_dir: Path) -> None:
    entry = left_open()
    client.force_login(staff_account("ops_carl", "operator"))
    assert "the destructive role ends it" in text(client.get("/ops/operations/"))
    response = client.post(f"/ops/operations/{entry.pk}/close/", {"password": PASSWORD})
    assert response.status_code == 403
    entry.refresh_from_db()
    assert entry.ok is None
    for path in ("/ops/operations/1/explode/", "/ops/operations/x/close/"):
        assert client.post(path, {"password": PASSWORD}).status_code == 404
