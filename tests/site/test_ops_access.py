"""Who reaches the console and the admin: operators (staff accounts) only.

Anonymous visitors are sent to the staff log-in, a signed-in pinner is refused
with a 403 (pinners are not Django users: no pinner session is a way in), and
``ensure_operator`` makes the first staff account once.
"""

from __future__ import annotations

import io
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from pinboard.ops.models import JournalEntry
from tests.site.ops import OPS_ROUTES, config_dir_fixture, operator_fixture, staff_fixture, text  # noqa: F401
from tests.site.page_helpers import log_in

ADMIN_PAGES = ["/admin/", "/admin/ops/journalentry/", "/admin/auth/user/"]


def ops_urls() -> list[str]:
    return [reverse(name, kwargs=kwargs) for name, kwargs in OPS_ROUTES]


@pytest.mark.django_db
def test_anonymous_visitors_are_sent_to_the_staff_log_in(client: Client) -> None:
    for url in [*ops_urls(), "/ops/hosts/db1/", "/ops/journal/1/"]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"] == f"/admin/login/?next={quote(url)}", url
    posted = client.post(reverse("ops_action", kwargs={"action": "close-range"}), {"first": 0})
    assert posted.status_code == 302 and posted["Location"].startswith("/admin/login/")
    for url in ADMIN_PAGES:
        assert client.get(url)["Location"].startswith("/admin/login/?next="), url


@pytest.mark.django_db
def test_a_pinner_is_refused_everywhere_in_the_console_and_the_admin(
    client: Client, make_user: Any, config_dir: Any
) -> None:
    log_in(client, make_user("pinner"))
    for url in [*ops_urls(), "/ops/hosts/db1/", "/ops/journal/1/", *ADMIN_PAGES]:
        response = client.get(url)
        assert response.status_code == 403, url
        assert "Operators only" in text(response), url
    # Nor may a pinner run anything: the POST is refused before any plan is made.
    response = client.post(
        reverse("ops_action", kwargs={"action": "close-range"}),
        {"first": 0, "last": 3, "step": "plan"},
    )
    assert response.status_code == 403
    assert not JournalEntry.objects.exists()


@pytest.mark.django_db
def test_a_staff_less_django_account_is_refused(client: Client) -> None:
    client.force_login(get_user_model().objects.create_user("clerk", password="x-long-pass-1"))
    assert client.get("/ops/").status_code == 403
    assert client.get("/admin/").status_code == 403


def test_operators_reach_every_page(staff: Client) -> None:
    for url in ops_urls():
        assert staff.get(url).status_code == 200, url
    for url in ADMIN_PAGES[:2]:  # the journal; accounts are for superusers
        assert staff.get(url).status_code == 200, url


def test_staff_log_in_leads_back_to_the_console(client: Client, operator: Any) -> None:
    login = client.get("/admin/login/?next=/ops/")
    assert login.status_code == 200
    response = client.post(
        "/admin/login/?next=/ops/",
        {"username": "ops_ada", "password": "tangerine-lantern-77", "next": "/ops/"},
    )
    assert response.status_code == 302 and response["Location"] == "/ops/"


def test_every_console_form_is_csrf_protected(operator: Any, config_dir: Any) -> None:
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(operator)
    url = reverse("ops_action", kwargs={"action": "close-range"})
    page = strict.get(url)
    assert 'name="csrfmiddlewaretoken"' in text(page)
    assert strict.post(url, {"first": 0, "last": 3, "step": "plan"}).status_code == 403


def test_the_journal_is_read_only_in_the_admin(staff: Client) -> None:
    assert staff.get("/admin/ops/journalentry/add/").status_code == 403
    page = text(staff.get("/admin/ops/journalentry/"))
    assert "Add journal entry" not in page


# -- ensure_operator ------------------------------------------------------------------


def ensure_operator() -> str:
    out = io.StringIO()
    call_command("ensure_operator", stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_ensure_operator_makes_one_staff_account_and_prints_its_password_once(
    client: Client,
) -> None:
    printed = ensure_operator()
    password = printed.split("password: ")[1].split()[0]
    users = get_user_model().objects.all()
    assert [(u.username, u.is_staff, u.is_superuser) for u in users] == [("operator", True, True)]
    assert password not in users[0].password  # only its hash is kept
    assert client.login(username="operator", password=password)
    assert client.get("/ops/").status_code == 200

    assert ensure_operator() == ""  # idempotent and silent
    assert get_user_model().objects.count() == 1


@pytest.mark.django_db
def test_ensure_operator_does_nothing_when_a_staff_account_exists() -> None:
    get_user_model().objects.create_user("someone", password="x-long-pass-1", is_staff=True)
    assert ensure_operator() == ""
    assert not get_user_model().objects.filter(username="operator").exists()


@pytest.mark.django_db
def test_ensure_operator_will_not_promote_an_existing_non_staff_operator_account() -> None:
    get_user_model().objects.create_user("operator", password="x-long-pass-1")
    with pytest.raises(CommandError, match="make it staff"):
        ensure_operator()
    assert not get_user_model().objects.filter(is_staff=True).exists()
