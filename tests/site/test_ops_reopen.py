"""The console's *Reopen a master* action (``shardstore reopen HOST``): registered beside
the others, the destructive role's, and refused on its form, before anything is journaled,
for a host that is not a MySQL master of the map. (Its run on real MariaDB:
tests/shardstore/test_reopen.py.)"""

from __future__ import annotations

from pathlib import Path

from django.test import Client

from pinboard.ops.console_actions import ACTIONS
from pinboard.ops.models import JournalEntry
from pinboard.ops.roles import DESTRUCTIVE
from tests.site.ops import (  # noqa: F401
    config_dir_fixture,
    operator_fixture,
    shards_document,
    staff_fixture,
)
from tests.site.test_ops_actions import plan


def test_a_reopen_is_planned_from_the_console_and_refused_for_a_host_it_cannot_open(
    staff: Client, config_dir: Path
) -> None:
    assert "reopen" in ACTIONS and "reopen" in DESTRUCTIVE
    document = shards_document(config_dir)
    master = document["ranges"][0]["master"]
    refused = plan(staff, "reopen", {"host": master}, status=400)
    if str(document["hosts"][master]).startswith("mysql://"):  # the servers plane
        assert f"{master} is writable already" in refused
    else:
        assert f"{master} is no MySQL host: nothing to reopen" in refused
    assert "no host nohost in the shard map" in plan(
        staff, "reopen", {"host": "nohost"}, status=400
    )
    assert not JournalEntry.objects.exists()
