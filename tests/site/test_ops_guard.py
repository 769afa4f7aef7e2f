"""The console's guard: *Pause the guard* planned, confirmed and journaled (the operator's
role, not the destructive one), the overview saying it is paused and showing the guard's
decisions, and a pause of a paused guard refused before anything is journaled. (The
guard's failovers on real MariaDB: tests/shardstore/test_guard.py.)"""

from __future__ import annotations

import time
from pathlib import Path

from django.test import Client

from pinboard.ops.console_actions import ACTIONS
from pinboard.ops.fleet_metrics import the_guard
from pinboard.ops.models import JournalEntry
from pinboard.ops.roles import DESTRUCTIVE
from shardstore.control.file_source import FileSource
from shardstore.control.guard import KIND
from tests.site.ops import (  # noqa: F401
    config_dir_fixture,
    operator_fixture,
    staff_fixture,
    text,
)
from tests.site.test_ops_actions import confirm, plan


def test_the_guard_is_paused_from_the_console_and_the_overview_says_so(
    staff: Client, config_dir: Path
) -> None:
    assert "guard-pause" in ACTIONS and "guard-pause" not in DESTRUCTIVE
    assert "Watching." in text(staff.get("/ops/"))
    page = plan(staff, "guard-pause", {"state": "pause", "reason": "moving racks"})
    assert "pause the guard: moving racks" in page
    assert confirm(staff, "guard-pause", page).status_code == 302
    run = JournalEntry.objects.get(dry_run=False)
    assert run.ok and run.operation == "guard-pause" and run.operator == "ops_ada"
    overview = text(staff.get("/ops/"))
    assert "Paused by ops_ada: moving racks." in overview
    assert "the guard is paused already" in plan(
        staff, "guard-pause", {"state": "pause", "reason": "again"}, status=400
    )

    # (A record an earlier release kept names the host "master".)
    decision = {"master": "MySQL001A", "kind": "cooling-down", "evidence": "0-7 was recovered 60s ago", "at": 0.0}  # fmt: skip
    FileSource(config_dir).record(KIND, "decisions", {"decisions": [decision]})
    overview = text(staff.get("/ops/"))
    assert "<td>1970-01-01 00:00:00Z</td><td>MySQL001A</td><td>cooling-down</td>" in overview


def test_the_guard_metrics_say_paused_its_last_pass_and_its_newest_decision_per_host(
    config_dir: Path,
) -> None:
    source = FileSource(config_dir)
    now = time.time()
    source.record(KIND, "pause", {"paused": True, "by": "ada", "reason": "racks", "at": now})
    source.record(KIND, "leader", {"instance": "g1", "at": now - 90})
    older = {"host": "A", "kind": "failover", "evidence": "...", "at": now - 600, "detected": 5.5, "took": 3.25}  # fmt: skip
    newer = {"host": "A", "kind": "paused", "evidence": "...", "at": now - 1}
    source.record(KIND, "decisions", {"decisions": [newer, older]})
    source.record(KIND, "counts", {"failover": 1, "paused": 1})
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in the_guard()
        for sample in family.samples
    }
    assert samples[("pinboard_guard_paused", ())] == 1
    assert 90 <= samples[("pinboard_guard_pass_age_seconds", ())] < 120
    [(key, age)] = [(k, v) for k, v in samples.items() if k[0] == "pinboard_guard_decision_age_seconds"]  # fmt: skip
    assert key[1] == (("host", "A"), ("kind", "paused")) and 1 <= age < 30
    assert samples[("pinboard_guard_decisions", (("kind", "failover"),))] == 1
    failover = (("host", "A"), ("kind", "failover"))  # the newest decision with its times
    assert samples[("pinboard_guard_detection_seconds", failover)] == 5.5
    assert samples[("pinboard_guard_recovery_seconds", failover)] == 3.25
