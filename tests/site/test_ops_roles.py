"""The console's roles and doors: a staff account with no role reads and runs nothing, the
operator runs what is not destructive, the destructive role the rest; running anything
that changes the topology asks for the password again after a few minutes; a staff
session ends after hours; the staff log-in is rate-limited per address and per account."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.test import Client
from django.urls import reverse

from pinboard.ops.console_actions import ACTIONS
from pinboard.ops.models import Job, JournalEntry
from pinboard.ops.roles import DESTRUCTIVE
from tests.site.ops import (  # noqa: F401
    OPS_ROUTES,
    clock_fixture,
    config_dir_fixture,
    hidden_fields,
    shards_document,
    staff_account,
    text,
)
from tests.site.test_ops_actions import confirm, plan

PASSWORD = "tangerine-lantern-77"  # staff_account's


def signed_in(client: Client, *roles: str) -> Client:
    client.force_login(staff_account(f"ops_{'_'.join(roles) or 'none'}", *roles))
    return client


def publish_data(config_dir: Path) -> dict[str, Any]:
    edited = {**shards_document(config_dir), "open": [[0, 7]]}
    return {"document": "shards", "body": json.dumps(edited), "reason": "fewer"}


@pytest.mark.django_db
@pytest.mark.parametrize("roles", [(), ("viewer",)])
def test_without_a_role_to_run_staff_read_everything_and_run_nothing(
    client: Client, config_dir: Path, roles: tuple[str, ...]
) -> None:
    signed_in(client, *roles)
    for name, kwargs in OPS_ROUTES:
        assert client.get(reverse(name, kwargs=kwargs)).status_code == 200, name
    assert client.get("/admin/ops/journalentry/").status_code == 200  # as the console shows it
    for action in ACTIONS:
        for step in ("plan", "run"):
            response = client.post(f"/ops/actions/{action}/", {"step": step})
            assert response.status_code == 403, (action, step)
            assert "Not your role" in text(response)
    assert client.post("/ops/jobs/", {"kind": "reconcile"}).status_code == 403
    job = Job.objects.create(kind="reconcile", params={}, total=1, created_by="someone")
    assert client.post(f"/ops/jobs/{job.pk}/resume/").status_code == 403
    assert not JournalEntry.objects.exists() and Job.objects.count() == 1
    assert shards_document(config_dir)["version"] == 1


@pytest.mark.django_db
def test_the_operator_runs_what_is_not_destructive_and_the_destructive_role_the_rest(
    client: Client, config_dir: Path
) -> None:
    operator = signed_in(client, "operator")
    for action in DESTRUCTIVE:
        response = operator.post(f"/ops/actions/{action}/", {"step": "plan"})
        assert response.status_code == 403 and "destructive" in text(response), action
    assert confirm(operator, "publish", plan(operator, "publish", publish_data(config_dir)))
    assert shards_document(config_dir)["version"] == 2
    destructive = signed_in(Client(), "destructive")
    assert destructive.post("/ops/actions/publish/", {"step": "plan"}).status_code == 403
    page = plan(destructive, "close-range", {"first": 0, "last": 3})
    assert confirm(destructive, "close-range", page).status_code == 302
    document = shards_document(config_dir)
    assert document["open"] == [[4, 7]] and document["version"] == 3


def test_a_job_that_drops_data_is_started_and_resumed_by_the_destructive_role_only(
    client: Client,
) -> None:
    job = Job.objects.create(kind="cleanup", params={"split": 3}, total=4, created_by="ops_ada")
    operator = signed_in(client, "operator")
    for response in (
        operator.post(f"/ops/jobs/{job.pk}/resume/"),
        operator.post("/ops/jobs/", {"kind": "cleanup", "first": "0", "last": "3"}),
    ):
        assert response.status_code == 403 and "destructive" in text(response)
    assert Job.objects.count() == 1 and not job.chunks.exists()  # nothing queued, nothing started
    destructive = signed_in(Client(), "destructive")
    assert destructive.post(f"/ops/jobs/{job.pk}/resume/").status_code == 302
    reconcile = operator.post("/ops/jobs/", {"kind": "reconcile", "first": "0", "last": "1", "check": "on"})  # fmt: skip
    assert reconcile.status_code == 302  # a job that drops nothing: the operator's


@pytest.mark.django_db
def test_a_topology_change_asks_for_the_password_after_five_minutes(
    client: Client, config_dir: Path, clock: list[float]
) -> None:
    staff = signed_in(client, "operator")
    page = plan(staff, "publish", publish_data(config_dir))
    assert 'name="password"' not in page  # just logged in: sudo mode
    clock[0] += 5 * 60 + 1
    page = plan(staff, "publish", publish_data(config_dir))
    assert 'name="password"' in page
    refused = confirm(staff, "publish", page)
    assert refused.status_code == 403 and "give your password again" in text(refused)
    wrong = staff.post("/ops/actions/publish/", {**hidden(page), "password": "not-it"})
    assert wrong.status_code == 403 and shards_document(config_dir)["version"] == 1
    right = staff.post("/ops/actions/publish/", {**hidden(page), "password": PASSWORD})
    assert right.status_code == 302 and shards_document(config_dir)["version"] == 2
    runs = JournalEntry.objects.filter(dry_run=False)
    assert runs.count() == 1 and runs.get().ok
    # Given again, it holds for five minutes more; a comparison never asks for it.
    clock[0] += 60
    assert 'name="password"' not in plan(staff, "rollback", {"document": "shards", "version": 1, "reason": "undo"})  # fmt: skip
    clock[0] += 10 * 60
    assert 'name="password"' not in plan(staff, "diff", {"host_a": "db1", "host_b": "db1"}, 400)


@pytest.mark.django_db
def test_password_guesses_in_sudo_mode_are_rate_limited(
    client: Client, config_dir: Path, clock: list[float], settings: Any
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login_failures": (2, 300)}
    caches["ratelimit"].clear()
    staff = signed_in(client, "operator")
    clock[0] += 5 * 60 + 1
    page = plan(staff, "publish", publish_data(config_dir))
    answers = [
        staff.post("/ops/actions/publish/", {**hidden(page), "password": guess}).status_code
        for guess in ("a-guess", "b-guess", PASSWORD)
    ]
    assert answers == [403, 403, 429] and shards_document(config_dir)["version"] == 1
    caches["ratelimit"].clear()


def hidden(page: str) -> dict[str, str]:
    """What "Run it" posts back from a plan page."""
    return {**hidden_fields(page), "step": "run"}


@pytest.mark.django_db
def test_a_staff_session_ends_hours_after_its_log_in(
    client: Client, config_dir: Path, clock: list[float], settings: Any
) -> None:
    staff = signed_in(client, "viewer")
    assert staff.session.get_expiry_age() <= settings.OPS_SESSION_SECONDS <= 12 * 3600
    assert staff.get("/ops/").status_code == 200
    clock[0] += settings.OPS_SESSION_SECONDS + 1
    response = staff.get("/ops/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    assert staff.get("/admin/").status_code == 302


@pytest.mark.django_db
def test_the_staff_log_in_locks_out_the_guessing_addresses_never_the_operator(
    client: Client, settings: Any
) -> None:
    limits = {"login": (100, 60), "login_failures": (3, 300), "login_account": (4, 300)}
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, **limits}
    settings.LOGIN_SLOWED_SECONDS = 60
    caches["ratelimit"].clear()
    staff_account("ops_target")

    def attempt(username: str, address: str, password: str = "wrong") -> int:
        form = {"username": username, "password": password, "next": "/ops/"}
        return Client().post("/admin/login/", form, REMOTE_ADDR=address).status_code

    assert [attempt("ops_target", "10.5.0.1") for _ in range(4)] == [200, 200, 200, 429]
    assert attempt("ops_target", "10.5.0.2") == 200  # the account's 4th wrong: now slowed
    assert attempt("ops_target", "10.5.0.2") == 200  # its one try a minute
    assert attempt("ops_target", "10.5.0.2", PASSWORD) == 429  # an address that failed
    assert attempt("ops_target", "10.5.0.3", PASSWORD) == 302  # the operator gets in
    assert attempt("someone_else", "10.5.0.4") == 200
    caches["ratelimit"].clear()


@pytest.mark.django_db
def test_a_staff_account_is_changed_in_the_admin_only_in_sudo_mode_and_journaled(
    client: Client, clock: list[float]
) -> None:
    """A stolen session would set its own password (the admin's form asks for no current
    one) or make a superuser, then pass the console's prompt: not without the password."""
    boss = get_user_model().objects.create_superuser("ops_boss", password=PASSWORD)
    target = staff_account("ops_target")
    client.force_login(boss)
    clock[0] += 5 * 60 + 1  # past the log-in's sudo mode
    new_password = {"password1": "quince-harbour-81", "password2": "quince-harbour-81"}
    where = f"/admin/auth/user/{target.pk}/password/"
    refused = client.post(where, new_password)
    assert refused.status_code == 403 and 'name="password"' in text(refused)
    added = client.post("/admin/auth/user/add/", {"username": "ops_mole", **new_password})
    assert added.status_code == 403 and not get_user_model().objects.filter(username="ops_mole").exists()  # fmt: skip
    target.refresh_from_db()
    assert target.check_password(PASSWORD)  # unchanged

    assert client.post("/ops/confirm/", {"password": "not-mine", "next": where}).status_code == 403
    confirmed = client.post("/ops/confirm/", {"password": PASSWORD, "next": where})
    assert confirmed.status_code == 302 and confirmed["Location"] == where
    assert client.post(where, new_password).status_code == 302
    target.refresh_from_db()
    assert target.check_password("quince-harbour-81")
    entry = JournalEntry.objects.get(operation="staff-account")
    assert entry.operator == "ops_boss" and "ops_target" in entry.summary and entry.ok
