"""Fixtures and helpers for the console's tests (tests/site/test_ops_*.py).

Import the fixtures (``config_dir``, ``clock``, ``operator``, ``staff``) by their ``*_fixture``
names. ``config_dir`` gives each test a config source of its own (a directory
holding the site's shard map in force as version 1), so what one test
publishes no other sees; the console's views and ``pinboard.ops.control``
open it through settings, as in production.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from pinboard.data_plane import cached_store
from pinboard.ops import reauth
from shardstore.control import documents
from shardstore.control.file_source import FileSource

#: Every console page, as (route name, URL parameters) for reverse().
OPS_ROUTES = [
    ("ops_overview", {}),
    ("ops_decode", {}),
    ("ops_topology", {}),
    ("ops_caches", {}),
    ("ops_celery", {}),
    ("ops_journal", {}),
    ("ops_jobs", {}),
    ("ops_actions", {}),
    ("ops_confirm", {}),
    ("ops_action", {"action": "close-range"}),
    ("ops_action", {"action": "publish"}),
]


@pytest.fixture(name="config_dir")
def config_dir_fixture(tmp_path: Path, settings: Any) -> Iterator[Path]:
    """A config source of this test: the shard map in force, published as version 1."""
    root = tmp_path / "config"
    source = FileSource(root)
    document = cached_store().topology.as_json()
    source.publish(documents.SHARDS, document, author="test", reason="the site's shard map")
    settings.SHARDSTORE = {**settings.SHARDSTORE, "CONFIG": str(root)}
    yield root
    source.close()


@pytest.fixture(name="clock")
def clock_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The time the console's sessions read: ``clock[0] += seconds`` moves it on."""
    now = [reauth.time.time()]
    monkeypatch.setattr(reauth.time, "time", lambda: now[0])
    yield now


@pytest.fixture(name="operator")
def operator_fixture(db: None) -> Any:
    """A staff account with every role of the console (roles.py): it runs every action."""
    return staff_account("ops_ada", "operator", "destructive")


def staff_account(username: str, *roles: str) -> Any:
    """A staff account holding ``roles`` (groups; none: it may only read the console)."""
    user = get_user_model().objects.create_user(
        username, password="tangerine-lantern-77", is_staff=True
    )
    user.groups.set(Group.objects.filter(name__in=roles))
    return user


@pytest.fixture(name="staff")
def staff_fixture(client: Client, operator: Any, config_dir: Path) -> Client:
    """A client signed in as an operator, on the test's own config source."""
    client.force_login(operator)
    return client


def shards_document(root: Path) -> dict[str, Any]:
    source = FileSource(root)
    try:
        return source.current(documents.SHARDS).document
    finally:
        source.close()


def text(response: Any) -> str:
    return response.content.decode()


def hidden_fields(page: str) -> dict[str, str]:
    """The hidden inputs of the confirm form on a plan page (what "Run it" posts back)."""
    found = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page)
    return {name: html.unescape(value) for name, value in found}
