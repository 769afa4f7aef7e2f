"""No console page, form or journal entry shows the password of an address: a shard map
published before maps were refused one still holds it in the history, and an operator may
type one into a form or meet one in an error."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection
from django.test import Client

from pinboard.ops.control import DatabaseJournal
from pinboard.ops.models import JournalEntry
from shardstore import Topology
from shardstore.control import documents
from shardstore.control.file_source import FileSource
from shardstore.control.plans import Plan, Step
from tests.site.ops import config_dir_fixture, operator_fixture, staff_fixture, text  # noqa: F401

SECRET = "hunter2-plum"


def _with_password(address: str) -> str:
    return re.sub(r"://([^@/]*@)?", f"://site:{SECRET}@", address, count=1)


@pytest.fixture
def old_map(config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Version 2 of the shard map holds the site's password, as maps could before."""
    source = FileSource(config_dir)
    document = source.current(documents.SHARDS).document
    hosts = {name: _with_password(address) for name, address in document["hosts"].items()}
    with monkeypatch.context() as before:
        before.setitem(documents._VALIDATORS, documents.SHARDS, Topology.from_json)
        source.publish(
            documents.SHARDS, {**document, "hosts": hosts}, author="ops_bob", reason="old"
        )
    source.close()


def test_the_topology_page_and_its_diffs_mask_every_password(staff: Client, old_map: None) -> None:
    for query in ({}, {"a": "1", "b": "2"}, {"a": "2", "b": "1"}):
        page = text(staff.get("/ops/topology/", query))
        assert SECRET not in page
        assert "site:****@" in page


def test_the_publish_form_starts_masked_and_refuses_a_password(
    staff: Client, config_dir: Path, old_map: None
) -> None:
    form = text(staff.get("/ops/actions/publish/"))
    assert SECRET not in form and "site:****@" in form
    source = FileSource(config_dir)
    body = documents.masked(source.current(documents.SHARDS).document)  # as the form has it
    source.close()
    refused = staff.post(
        "/ops/actions/publish/",
        {
            "document": "shards",
            "body": json.dumps(body),
            "expect_version": "2",
            "reason": "as it was",
            "step": "plan",
        },
    )
    assert "the address holds a password" in text(refused)


def test_an_address_typed_into_a_form_is_refused_and_shown_masked(staff: Client) -> None:
    response = staff.post(
        "/ops/actions/open-range/",
        {
            "count": "4",
            "master": "mysql009a",
            "master_address": f"mysql://site:{SECRET}@10.0.0.9:3306",
            "step": "plan",
        },
    )
    page = text(response)
    assert response.status_code == 400 and "the address holds a password" in page
    assert SECRET not in page and "mysql://site:****@10.0.0.9:3306" in page
    assert not JournalEntry.objects.exists()


def test_journal_entries_keep_no_password(staff: Client) -> None:
    address = f"mysql://site:{SECRET}@10.0.0.9:3306"
    plan = Plan(
        "open-range",
        f"open shards on {address}",
        [Step(f"check {address}", ("mysql009a",), lambda: None)],
        {"master_address": address, "diff": f'+ "db9": "{address}"'},
    )
    journal = DatabaseJournal()
    entry = journal.begin(plan, operator="ops_ada", dry_run=False)
    journal.step(entry, 1, f"check {address}", f"reached {address}")
    journal.finish(entry, ok=False, result=f"cannot connect to {address}", seconds=0.1)
    stored = JournalEntry.objects.get(pk=entry.pk)
    fields = [stored.summary, stored.plan, stored.params, stored.steps, stored.result]
    assert SECRET not in repr(fields)
    for url in ("/ops/journal/", f"/ops/journal/{entry.pk}/"):
        page = text(staff.get(url))
        assert SECRET not in page and "site:****@" in page


def test_the_entries_written_before_are_masked_by_a_migration(db: None) -> None:
    address = f"mysql://site:{SECRET}@10.0.0.9:3306"
    written = JournalEntry.objects.create(
        operation="open-range",
        summary=f"open shards on {address}",
        plan=[f"1. check {address}"],
        params={"master_address": address, "count": 4},
        operator="ops_ada",
        steps=[[1, "check", f"reached {address}"]],
        result=f"cannot connect to {address}",
    )
    migration = importlib.import_module("pinboard.ops.migrations.0003_mask_journal_passwords")
    migration.mask_entries(apps, SimpleNamespace(connection=connection))
    entry = JournalEntry.objects.get(pk=written.pk)
    assert SECRET not in repr([entry.summary, entry.plan, entry.params, entry.steps, entry.result])
    assert entry.params == {"master_address": "mysql://site:****@10.0.0.9:3306", "count": 4}
