"""The console's *Durability of a range* action (``shardstore durability FIRST-LAST
POLICY``): registered beside the others, the operator's role (not the destructive one), and
refused on its form, before anything is journaled, for what it cannot do. (Its run on real
MariaDB: tests/shardstore/test_durability.py.)"""

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


def test_a_durability_change_is_planned_from_the_console_and_refused_with_its_reason(
    staff: Client, config_dir: Path
) -> None:
    assert "durability" in ACTIONS and "durability" not in DESTRUCTIVE
    document = shards_document(config_dir)
    first, last = document["ranges"][0]["range"]
    master = document["ranges"][0]["master"]
    degrade = {"first": first, "last": last, "policy": "degrade", "seconds": 3}
    if str(document["hosts"][master]).startswith("mysql://"):  # the servers plane
        page = plan(staff, "durability", degrade)
        assert f"durability of {first}-{last} (master {master}): strict -&gt; degrade-after 3s" in page  # fmt: skip
        assert "has no replica: strict" in plan(
            staff, "durability", {**degrade, "policy": "strict"}, status=400
        )
    else:
        page = plan(staff, "durability", degrade, status=400)
        assert f"{master} is no MySQL host" in page
    assert f"no range {first}-{last + 1} in the shard map" in plan(
        staff, "durability", {**degrade, "last": last + 1}, status=400
    )
    assert "degrade-after needs its seconds" in plan(
        staff, "durability", {**degrade, "seconds": ""}, status=400
    )
    assert "Ensure this value is less than or equal to 9" in plan(
        staff, "durability", {**degrade, "seconds": 10}, status=400
    )
    assert not JournalEntry.objects.filter(dry_run=False).exists()
