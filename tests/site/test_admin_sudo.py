"""Every way the admin changes a staff account is under the console's sudo mode and
journaled with who did it: the admin's own password form (its old-password field would
otherwise be a guessing oracle no limit counts), a role given or superuser made on the
change form, and accounts deleted several at once (Django records those in one bulk
write, which no signal sees). (The password set for another account and an account
added: test_ops_roles.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from pinboard.ops.models import JournalEntry
from tests.site.ops import clock_fixture, staff_account, text  # noqa: F401
from tests.site.test_ops_roles import PASSWORD

pytestmark = pytest.mark.django_db
NEW = "quince-harbour-81"


@pytest.fixture
def boss(client: Client) -> Client:
    """A superuser's session, as one stolen would be: signed in, its sudo mode over."""
    client.force_login(get_user_model().objects.create_superuser("ops_boss", password=PASSWORD))
    return client


def confirm(client: Client, where: str) -> None:
    confirmed = client.post("/ops/confirm/", {"password": PASSWORD, "next": where})
    assert confirmed.status_code == 302 and confirmed["Location"] == where


def journaled() -> list[tuple[str, str]]:
    entries = JournalEntry.objects.filter(operation="staff-account").order_by("pk")
    return [(entry.operator, entry.summary) for entry in entries]


def test_the_admins_own_password_form_asks_for_the_password_again_and_is_journaled(
    boss: Client, clock: list[float]
) -> None:
    clock[0] += 5 * 60 + 1
    where = "/admin/password_change/"

    def change(old: str) -> Any:
        return boss.post(where, {"old_password": old, "new_password1": NEW, "new_password2": NEW})

    guesses = [change(f"guess-{n}") for n in range(12)]  # no answer tells a right guess
    assert {guess.status_code for guess in guesses} == {403}
    assert all('name="password"' in text(guess) for guess in guesses)
    assert change(PASSWORD).status_code == 403  # not even the right one, out of sudo mode
    assert get_user_model().objects.get(username="ops_boss").check_password(PASSWORD)
    assert journaled() == []

    confirm(boss, where)
    assert change(PASSWORD).status_code == 302
    assert get_user_model().objects.get(username="ops_boss").check_password(NEW)
    [(operator, summary)] = journaled()
    assert operator == "ops_boss" and "ops_boss" in summary


def test_a_role_or_superuser_given_on_the_change_form_asks_for_the_password_again(
    boss: Client, clock: list[float]
) -> None:
    target = staff_account("ops_target")
    destructive = Group.objects.get(name="destructive")
    where = f"/admin/auth/user/{target.pk}/change/"
    form = {
        "username": "ops_target",
        "is_active": "on",
        "is_staff": "on",
        "is_superuser": "on",
        "groups": [str(destructive.pk)],
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
    }
    clock[0] += 5 * 60 + 1
    assert boss.post(where, form).status_code == 403
    role = boss.post(f"/admin/auth/group/{destructive.pk}/change/", {"name": "renamed"})
    assert role.status_code == 403 and Group.objects.filter(name="destructive").exists()
    target.refresh_from_db()
    assert not target.is_superuser and not target.groups.exists()

    confirm(boss, where)
    assert boss.post(where, form).status_code == 302
    target.refresh_from_db()
    assert target.is_superuser and list(target.groups.all()) == [destructive]
    [(operator, summary)] = journaled()
    assert operator == "ops_boss" and "ops_target" in summary


def test_staff_accounts_deleted_together_are_each_journaled(boss: Client) -> None:
    doomed = [staff_account("ops_one"), staff_account("ops_two")]
    form = {"action": "delete_selected", "_selected_action": [a.pk for a in doomed], "post": "yes"}
    assert boss.post("/admin/auth/user/", form).status_code == 302  # just signed in: sudo mode
    assert not get_user_model().objects.filter(pk__in=[a.pk for a in doomed]).exists()
    entries = journaled()
    assert {operator for operator, _ in entries} == {"ops_boss"}
    assert sorted(summary.split()[1] for _, summary in entries) == ["ops_one", "ops_two"]
