"""The ZooKeeper hosts' Puppet (infra/puppet): a host outside the ensemble is refused, and
zoo.cfg lists every member of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import unavailable
from tests.infra import puppet_checks as checks
from tests.infra.puppet_checks import EXAMPLE_DEPLOY, PUPPET_DIR
from tests.infra.test_puppet import TEMPLATES, _facts


@pytest.fixture(autouse=True)
def _tools() -> None:
    tool = checks.missing_tool()
    if tool is not None:
        unavailable(tool, f"{tool} is not on PATH (Debian packages: puppet, puppet-lint)")


def test_a_zookeeper_host_outside_the_ensemble_is_refused(tmp_path: Path) -> None:
    facts = _facts("zookeeper", "staging", "zk9")
    run = checks.noop_apply(PUPPET_DIR, tmp_path, facts)
    assert run.returncode == 1
    assert "zk9 is not a member of pinboard::zookeeper" in run.output


def test_zoo_cfg_lists_every_member_of_the_ensemble() -> None:
    rendered = checks.render(
        TEMPLATES / "zoo.cfg.epp",
        {"ensemble": yaml.safe_load(EXAMPLE_DEPLOY.read_text())["pinboard::zookeeper"]},
    )
    servers = re.findall(r"^server\.(\d+)=([\d.]+):2888:3888$", rendered, re.MULTILINE)
    assert servers == [("1", "10.0.1.40"), ("2", "10.0.2.40"), ("3", "10.0.1.41")]
