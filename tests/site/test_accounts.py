"""Sign-up, log-in and uniqueness of usernames and emails."""

from __future__ import annotations

import threading

import pytest

from pinboard.errors import Conflict, InvalidField
from pinboard.users.actions import authenticate, sign_up
from pinboard.users.queries import get_user_by_username


def test_sign_up_and_authenticate_by_username_or_email(site_store):
    user = sign_up("Grace_H", "grace@example.com", "s3cret-pass")
    assert get_user_by_username("grace_h")["id"] == user["id"]
    assert authenticate("GRACE_H", "s3cret-pass")["id"] == user["id"]
    assert authenticate("Grace@Example.com", "s3cret-pass")["id"] == user["id"]
    assert authenticate("grace_h", "wrong-pass") is None
    assert authenticate("nobody_here", "s3cret-pass") is None
    assert "s3cret-pass" not in user["password"]


@pytest.mark.parametrize(
    ("username", "email", "password", "field"),
    [
        ("ab", "a@example.com", "plum-orchard-42", "username"),
        ("has space", "a@example.com", "plum-orchard-42", "username"),
        ("login", "a@example.com", "plum-orchard-42", "username"),
        ("valid_name", "not-an-email", "plum-orchard-42", "email"),
        ("valid_name", "a@example.com", "short", "password"),
        (None, "a@example.com", "plum-orchard-42", "username"),
    ],
)
def test_invalid_sign_ups_name_the_field(site_store, username, email, password, field):
    with pytest.raises(InvalidField) as error:
        sign_up(username, email, password)
    assert error.value.field == field


def test_taken_username_and_email_are_conflicts_and_change_nothing(site_store):
    first = sign_up("taken_name", "taken@example.com", "plum-orchard-42")
    with pytest.raises(Conflict) as error:
        sign_up("TAKEN_NAME", "other@example.com", "plum-orchard-42")
    assert error.value.field == "username"
    with pytest.raises(Conflict) as error:
        sign_up("other_name", "TAKEN@example.com", "plum-orchard-42")
    assert error.value.field == "email"
    # The failed sign-up released the username it had claimed.
    assert sign_up("other_name", "other@example.com", "plum-orchard-42")["id"] != first["id"]


def test_racing_sign_ups_leave_one_account(site_store):
    results: list[object] = []
    barrier = threading.Barrier(6)

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            results.append(sign_up("racer", f"racer{i}@example.com", "plum-orchard-42"))
        except Conflict as conflict:
            results.append(conflict)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [r for r in results if isinstance(r, dict)]
    assert len(winners) == 1 and len(results) == 6
    assert get_user_by_username("racer")["id"] == winners[0]["id"]
