"""The alerting and recording rules (infra/monitoring/rules) and the dashboards
(infra/monitoring/dashboards): promtool accepts the rules and passes their unit tests, every
alert has a test and a runbook entry, and every dashboard's query names metrics the code
exports (or the rules record)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

import pinboard.metrics  # noqa: F401 - defines the site's families
import shardstore.metrics  # noqa: F401 - the data plane's
from pinboard.ops.fleet_metrics import FAMILIES as FLEET_FAMILIES
from tests.conftest import unavailable

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "infra" / "monitoring"
RULE_FILES = sorted((MONITORING / "rules").glob("*.yml"))
TEST_FILES = sorted((MONITORING / "tests").glob("*.test.yml"))
DASHBOARDS = sorted((MONITORING / "dashboards").glob("*.json"))
RUNBOOK = ROOT / "docs" / "operations.md"

#: A metric's name in PromQL, as the code or a recording rule spells it.
METRIC = re.compile(r"\b(?:pinboard_|shardstore_|[a-z_]+:)[a-z0-9_:]*[a-z0-9]\b")


def _promtool(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    promtool = shutil.which("promtool")
    if promtool is None:
        unavailable("promtool", "it is not installed (Debian package: prometheus)")
    return subprocess.run(
        [str(promtool), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def _rules() -> list[dict[str, Any]]:
    return [rule for path in RULE_FILES for g in yaml.safe_load(path.read_text())["groups"] for rule in g["rules"]]  # fmt: skip


def test_promtool_accepts_the_rules() -> None:
    checked = _promtool("check", "rules", *map(str, RULE_FILES))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_alert_passes_its_unit_tests() -> None:
    tested = _promtool("test", "rules", *(p.name for p in TEST_FILES), cwd=MONITORING / "tests")
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_a_failing_unit_test_is_reported(tmp_path: Path) -> None:
    """(So that the test above could fail: an alert expected where none fires.)"""
    broken = tmp_path / "broken.test.yml"
    broken.write_text(
        yaml.safe_dump(
            {
                "rule_files": [str(RULE_FILES[0])],
                "tests": [
                    {
                        "input_series": [{"series": "pinboard_mysql_up{host='a'}", "values": "1x10"}],
                        "alert_rule_test": [
                            {"eval_time": "5m", "alertname": "MySQLHostDown",
                             "exp_alerts": [{"exp_labels": {"host": "a", "severity": "page"}}]}
                        ],
                    }
                ],
            }
        )
    )  # fmt: skip
    assert _promtool("test", "rules", str(broken)).returncode != 0


def test_every_alert_has_a_unit_test_and_a_runbook_entry() -> None:
    alerts = {rule["alert"] for rule in _rules() if "alert" in rule}
    tested = {
        case["alertname"]
        for path in TEST_FILES
        for test in yaml.safe_load(path.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
    }
    assert alerts - tested == set(), "alerts without a unit test"
    runbook = set(re.findall(r"^### (\w+)$", RUNBOOK.read_text(), re.M))
    assert alerts - runbook == set(), f"alerts without a '### Name' entry in {RUNBOOK.name}"


def exported() -> set[str]:
    """The name of every sample the code exports: its families in the registry (the site's
    and the data plane's), the fleet collector's, and Prometheus's own ``up``."""
    names = {"up", *FLEET_FAMILIES}
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
    for family in REGISTRY.collect():
        names.update(family.name + suffix for suffix in suffixes.get(family.type, ("",)))
    return names


def recorded() -> set[str]:
    return {rule["record"] for rule in _rules() if "record" in rule}


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.stem)
def test_each_dashboard_queries_only_what_is_exported(path: Path) -> None:
    dashboard = json.loads(path.read_text())
    assert dashboard["uid"] and dashboard["title"] and dashboard["panels"]
    known = exported() | recorded()
    for panel in dashboard["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            named = set(METRIC.findall(target["expr"])) | (
                {"up"} if re.search(r"\bup\b", target["expr"]) else set()
            )
            assert named, (panel["title"], target["expr"])
            assert named <= known, (panel["title"], named - known)


def test_the_dashboard_check_would_catch_a_name_the_code_does_not_export() -> None:
    assert "pinboard_http_requests_total" in exported()
    assert "pinboard_http_request_total" not in exported() | recorded()
    assert "route:pinboard_http_requests:rate5m" in recorded()


def test_every_recording_rule_is_used_by_a_dashboard_or_an_alert() -> None:
    used = " ".join(
        [*(t["expr"] for p in DASHBOARDS for pn in json.loads(p.read_text())["panels"] for t in pn["targets"])]
        + [rule["expr"] for rule in _rules() if "alert" in rule]
    )  # fmt: skip
    assert {name for name in recorded() if name not in used} == set()
