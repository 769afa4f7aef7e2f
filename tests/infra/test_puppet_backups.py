"""Backups and the guard in the Puppet catalogs (applied in noop with the example deploy):
each shard host's backup timer (`shardstore backup take HOST --replica-only --if-due 24`, as the
owner of MariaDB's data files), and on worker hosts the guard, the binary-log archiver
and the daily verification, each a `manage.py shardstore` command the library's own parser
accepts, run as pinboard with the site's environment, which names the store; the tools
they need installed; and a deploy with no store set taking no backup at all."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from pinboard.settings.secret import check_strong
from shardstore.cli import parser
from tests.conftest import unavailable
from tests.infra import puppet_checks as checks
from tests.infra.puppet_checks import EXAMPLE_DEPLOY, PUPPET_DIR

UNITS = "/etc/systemd/system"
MANAGE = "/opt/pinboard/current/venv/bin/python /opt/pinboard/current/manage.py shardstore "
DEPLOY = yaml.safe_load(EXAMPLE_DEPLOY.read_text())
STORE = DEPLOY["pinboard::backup_store"]
KMS_KEY = DEPLOY["pinboard::backup_kms_key"]
SHARD_HOST = DEPLOY["pinboard::mysql_pairs"][0]["replicas"][0]


def _noop(role: str, environment: str, host: str = "", deploy: Path = EXAMPLE_DEPLOY) -> checks.NoopRun:  # fmt: skip
    tool = checks.missing_tool()
    if tool is not None:
        unavailable(tool, f"{tool} is not on PATH (Debian packages: puppet, puppet-lint)")
    if os.geteuid() != 0:
        pytest.skip("a noop run of a whole role reads root-only state (packages, services)")
    facts = {"pinboard_role": role, "pinboard_environment": environment}
    facts |= {"pinboard_host": host} if host else {}
    with tempfile.TemporaryDirectory(prefix="puppet-") as state:
        run = checks.noop_apply(PUPPET_DIR, Path(state), facts, deploy)
    assert run.returncode in (0, 2) and not run.errors, run.output
    return run


@pytest.fixture(scope="module")
def worker() -> checks.NoopRun:
    return _noop("worker", "staging")


@pytest.fixture(scope="module")
def shard() -> checks.NoopRun:
    return _noop("mysql_shard", "production", SHARD_HOST)


def _unit(run: checks.NoopRun, name: str) -> dict[str, dict[str, str]]:
    """A unit file of the catalog, by section and key (comments left out)."""
    sections: dict[str, dict[str, str]] = {}
    section = ""
    for line in str(run.catalog[f"file[{UNITS}/{name}]"]["content"]).splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            sections[section] = {}
        elif line and not line.startswith("#"):
            key, _, value = line.partition("=")
            sections[section][key] = value
    return sections


def _shardstore_args(exec_start: str) -> list[str]:
    """What a unit's ExecStart asks `manage.py shardstore`, parsed by the library itself."""
    assert exec_start.startswith(MANAGE), exec_start
    args = shlex.split(exec_start.removeprefix(MANAGE))
    parser().parse_args(args)  # SystemExit on a command the library does not have
    return args


def _runs_as_the_app(unit: dict[str, dict[str, str]], user: str = "pinboard") -> None:
    service = unit["Service"]
    assert (service["User"], service["Group"]) == (user, user)
    assert service["EnvironmentFile"] == "/etc/pinboard/env"
    assert service["WorkingDirectory"] == "/opt/pinboard/current"


def _timed(timer: dict[str, dict[str, str]], calendar: str) -> None:
    assert timer["Timer"]["OnCalendar"] == calendar
    assert timer["Timer"]["RandomizedDelaySec"]
    assert timer["Timer"]["Persistent"] == "true"
    assert timer["Install"]["WantedBy"] == "timers.target"


def _running(run: checks.NoopRun, service: str) -> None:
    assert run.catalog[f"service[{service}]"]["ensure"] == "running"
    assert run.catalog[f"service[{service}]"]["enable"] is True


def _installed(run: checks.NoopRun, *packages: str) -> None:
    for package in packages:
        assert run.catalog[f"package[{package}]"]["ensure"] == "installed", package


def _environment(run: checks.NoopRun) -> tuple[str, str]:
    """The environment file's public part, and the arguments pinboard-env is run with."""
    public = str(run.catalog["file[/etc/pinboard/env.public]"]["content"])
    return public, str(run.catalog["exec[pinboard environment file]"]["command"])


@pytest.fixture(autouse=True)
def _store_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # As on the hosts: the store comes from the environment file.
    monkeypatch.setenv("PINBOARD_BACKUP_STORE", STORE)


# -- shard hosts --------------------------------------------------------------------------


def test_a_shard_host_backs_itself_up_when_due_if_it_is_a_replica(shard: checks.NoopRun) -> None:
    _installed(shard, "mariadb-backup", "zstd")
    service = _unit(shard, "pinboard-backup.service")
    assert service["Service"]["Type"] == "oneshot"
    # As the data files' owner: mariadb-backup reads them.
    _runs_as_the_app(service, user=str(shard.catalog["file[/srv/mysql/data]"]["owner"]))
    command = shlex.split(service["Service"]["ExecStart"].replace("$$", "$"))
    assert command[:2] == ["/bin/sh", "-ec"]
    key, _, run = command[2].partition(" exec ")
    assert key.startswith("PINBOARD_SECRET_KEY=$(")
    assert _shardstore_args(run) == ["backup", "take", SHARD_HOST, "--replica-only", "--if-due", "24"]  # fmt: skip
    assert "mariadb.service" in service["Unit"]["After"]
    _timed(_unit(shard, "pinboard-backup.timer"), "*:0/10")  # a request is taken within minutes
    _running(shard, "pinboard-backup.timer")


def test_the_shard_hosts_throwaway_key_is_one_production_settings_accept(shard: checks.NoopRun) -> None:  # fmt: skip
    """The shard hosts do not hold the site's secret key: the unit makes one up each run."""
    command = shlex.split(_unit(shard, "pinboard-backup.service")["Service"]["ExecStart"].replace("$$", "$"))  # fmt: skip
    key_part = command[2].partition(" exec ")[0]
    keys = [
        subprocess.run(
            ["sh", "-ec", f'{key_part}; printf %s "$PINBOARD_SECRET_KEY"'],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for _ in range(2)
    ]
    for key in keys:
        assert check_strong(key, "PINBOARD_SECRET_KEY") == key
    assert keys[0] != keys[1]


def test_a_shard_hosts_environment_names_the_store_and_holds_no_site_secret(shard: checks.NoopRun) -> None:  # fmt: skip
    public, command = _environment(shard)
    assert f"PINBOARD_BACKUP_STORE={STORE}\n" in public
    assert f"PINBOARD_BACKUP_KMS_KEY={KMS_KEY}\n" in public
    args = command.split()
    assert "--no-secret-key" in args  # no site key, and (no CONTROL_AT) no control database
    assert args[-1] == "true"  # the admin login, which mariadb-backup logs in with
    assert "PINBOARD_FENCE_COMMAND" not in public


# -- worker hosts -------------------------------------------------------------------------


def test_worker_hosts_have_what_verifications_and_restores_run(worker: checks.NoopRun) -> None:
    _installed(worker, "mariadb-server-core", "mariadb-backup", "zstd", "mariadb-client")


def test_every_worker_host_runs_a_guard(worker: checks.NoopRun) -> None:
    guard = _unit(worker, "pinboard-guard.service")
    _runs_as_the_app(guard)
    args = _shardstore_args(guard["Service"]["ExecStart"])
    assert args[:3] == ["guard", "run", "--instance"] and len(args) == 4
    assert guard["Service"]["Restart"] == "always"
    _running(worker, "pinboard-guard")


def test_every_worker_host_runs_a_binlog_archiver_with_its_spool(worker: checks.NoopRun) -> None:
    archive = _unit(worker, "pinboard-binlog-archive.service")
    _runs_as_the_app(archive)
    args = _shardstore_args(archive["Service"]["ExecStart"])
    spool = "/var/lib/pinboard/binlog-spool"
    assert args[:4] == ["backup", "archive", "--spool", spool]
    assert args[4] == "--instance" and len(args) == 6
    assert archive["Service"]["Restart"] == "always"
    assert spool.startswith(archive["Service"]["ReadWritePaths"] + "/")
    directory = worker.catalog[f"file[{spool}]"]
    assert (directory["ensure"], directory["owner"], directory["mode"]) == ("directory", "pinboard", "0750")  # fmt: skip
    _running(worker, "pinboard-binlog-archive")


def test_worker_hosts_verify_every_backup_daily_after_they_are_taken(worker: checks.NoopRun) -> None:  # fmt: skip
    verify = _unit(worker, "pinboard-backup-verify.service")
    _runs_as_the_app(verify)
    assert verify["Service"]["Type"] == "oneshot"
    assert _shardstore_args(verify["Service"]["ExecStart"]) == ["backup", "verify", "--all"]
    _timed(_unit(worker, "pinboard-backup-verify.timer"), "*-*-* 06:00:00")
    _running(worker, "pinboard-backup-verify.timer")


def test_a_worker_hosts_environment_names_the_store(worker: checks.NoopRun) -> None:
    public, command = _environment(worker)
    assert f"PINBOARD_BACKUP_STORE={STORE}\n" in public
    assert f"PINBOARD_BACKUP_KMS_KEY={KMS_KEY}\n" in public
    assert "--no-secret-key" not in command.split()


def test_web_hosts_are_not_told_of_the_store_nor_run_the_guard() -> None:
    web = _noop("web", "staging")
    public, _ = _environment(web)
    assert "PINBOARD_BACKUP_STORE" not in public  # their role may not read it (modules/iam)
    assert not {r for r in web.resources if "guard" in r or "backup" in r or "binlog" in r}


# -- a deploy without a store -------------------------------------------------------------


@pytest.mark.parametrize(("role", "host"), [("worker", ""), ("mysql_shard", SHARD_HOST)])
def test_without_a_store_no_backup_unit_is_installed_and_puppet_says_so(
    role: str, host: str, tmp_path: Path
) -> None:
    deploy = {k: v for k, v in DEPLOY.items() if not k.startswith("pinboard::backup_")}
    (tmp_path / "deploy.yaml").write_text(yaml.safe_dump(deploy))
    run = _noop(role, "staging", host, tmp_path / "deploy.yaml")
    assert "pinboard::backup_store is not set" in run.output
    units = {r for r in run.resources if r.startswith(("service[", "file[", "exec["))}
    assert not {r for r in units if "backup" in r or "binlog" in r}
    assert "PINBOARD_BACKUP_STORE" not in _environment(run)[0]
    # The guard needs no store.
    assert ("service[pinboard-guard]" in run.resources) == (role == "worker")
