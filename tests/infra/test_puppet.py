"""The Puppet half of the AWS deploy (infra/puppet): every manifest and template valid and
lint-clean, the shard hosts' my.cnf equal to the local cluster's replication settings,
every role compiling and applying in noop (its shell scripts: test_puppet_scripts.py and
test_fence_mysql.py)."""

from __future__ import annotations

import ast
import configparser
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import unavailable
from tests.infra import monitoring_checks as monitoring
from tests.infra import puppet_checks as checks
from tests.infra.puppet_checks import EXAMPLE_DEPLOY, PUPPET_DIR, ROOT
from toolkit.cluster.mysql import server_args

TEMPLATES = PUPPET_DIR / "modules" / "profile" / "templates"
DATA = PUPPET_DIR / "data"


@pytest.fixture(autouse=True)
def _tools() -> None:
    tool = checks.missing_tool()
    if tool is not None:
        unavailable(tool, f"{tool} is not on PATH (Debian packages: puppet, puppet-lint)")


def _name(path: Path) -> str:
    return str(path.relative_to(PUPPET_DIR))


def _hiera(environment: str) -> dict[str, object]:
    """common.yaml overlaid with the environment's file and the example deploy."""
    data: dict[str, object] = {}
    for path in (DATA / "common.yaml", DATA / "environments" / f"{environment}.yaml"):
        data.update(yaml.safe_load(path.read_text()))
    data.update(yaml.safe_load(EXAMPLE_DEPLOY.read_text()))
    return data


# -- validation, one test per file ------------------------------------------------------


@pytest.fixture(scope="module")
def manifests_validated() -> checks.Validation:
    return checks.validate_manifests(PUPPET_DIR)


@pytest.fixture(scope="module")
def templates_validated() -> checks.Validation:
    return checks.validate_templates(PUPPET_DIR)


@pytest.fixture(scope="module")
def linted() -> checks.Validation:
    return checks.lint(PUPPET_DIR)


@pytest.mark.parametrize("manifest", checks.manifests(PUPPET_DIR), ids=_name)
def test_manifest_parses(manifest: Path, manifests_validated: checks.Validation) -> None:
    assert not manifests_validated.complaints(manifest)


@pytest.mark.parametrize("template", checks.templates(PUPPET_DIR), ids=_name)
def test_template_is_valid_epp(template: Path, templates_validated: checks.Validation) -> None:
    assert not templates_validated.complaints(template)


@pytest.mark.parametrize("template", checks.templates(PUPPET_DIR), ids=_name)
def test_template_declares_its_parameters(template: Path) -> None:
    assert re.match(r"<%-\s*\|", template.read_text()), f"{template.name} declares no parameters"


@pytest.mark.parametrize("manifest", checks.manifests(PUPPET_DIR), ids=_name)
def test_manifest_is_lint_clean(manifest: Path, linted: checks.Validation) -> None:
    assert not linted.complaints(manifest)


def test_every_check_passes_as_a_whole(
    manifests_validated: checks.Validation,
    templates_validated: checks.Validation,
    linted: checks.Validation,
) -> None:
    """A failure no file was blamed for (a crash, an unreadable option) still fails."""
    for validation in (manifests_validated, templates_validated, linted):
        assert validation.returncode == 0, validation.output


def test_validation_names_the_broken_files_of_a_copy(tmp_path: Path) -> None:
    tree = tmp_path / "puppet"
    shutil.copytree(PUPPET_DIR, tree)
    manifest = tree / "modules" / "profile" / "manifests" / "redis.pp"
    manifest.write_text(manifest.read_text().rstrip().removesuffix("}"))  # unbalanced brace
    template = tree / "modules" / "profile" / "templates" / "zoo.cfg.epp"
    template.write_text(template.read_text() + "server.9=<%= $nowhere \n")  # unclosed tag

    manifests_validated = checks.validate_manifests(tree)
    assert manifests_validated.returncode != 0
    assert set(manifests_validated.by_file) == {manifest.resolve()}
    templates_validated = checks.validate_templates(tree)
    assert templates_validated.returncode != 0
    assert set(templates_validated.by_file) == {template.resolve()}

    role = tree / "modules" / "role" / "manifests" / "web.pp"
    role.write_text(role.read_text().replace("include profile::nginx", 'include "profile::nginx"'))
    linted = checks.lint(tree)
    assert linted.returncode != 0
    # (puppet-lint may or may not also complain of the manifest that does not parse.)
    assert set(linted.by_file) - {manifest.resolve()} == {role.resolve()}


# -- my.cnf against the local cluster ---------------------------------------------------

REPLICATION_SETTINGS = (
    "log_bin",
    "relay_log",
    "binlog_format",
    "log_slave_updates",
    "gtid_strict_mode",
    "read_only",
    "rpl_semi_sync_master_enabled",
    "rpl_semi_sync_slave_enabled",
    "rpl_semi_sync_master_wait_point",
    "rpl_semi_sync_master_timeout",
    "slave_net_timeout",
    "skip_slave_start",
)
_BOOLEANS = {"on": "1", "true": "1", "1": "1", "off": "0", "false": "0", "0": "0"}


def _normal(name: str, value: str) -> tuple[str, str]:
    value = value.strip()
    return name.strip().replace("-", "_"), _BOOLEANS.get(value.lower(), value)


def _cluster_settings() -> dict[str, str]:
    options = (arg.removeprefix("--").split("=", 1) for arg in server_args(1))
    return dict(_normal(name, value) for name, value in options)


def _mysqld(text: str) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return dict(_normal(name, value) for name, value in parser["mysqld"].items())


def _my_cnf(host: str, memory_bytes: int = 16 * 2**30) -> dict[str, str]:
    data = _hiera("production")
    settings = (
        "buffer_pool_percent",
        "datadir",
        "max_connections",
        "innodb_log_file_size",
        "innodb_io_capacity",
        "table_open_cache",
        "table_definition_cache",
        "binlog_expire_days",
    )
    values: dict[str, object] = {name: data[f"profile::mysql_shard::{name}"] for name in settings}
    pair = data["pinboard::mysql_pairs"][0]  # type: ignore[index]
    values |= {
        "host": host,
        "deploy_role": "master" if host == pair["master"] else "replica",
        "ipv4": data["pinboard::hosts"][host],  # type: ignore[index]
        "memory_bytes": memory_bytes,
    }
    return _mysqld(checks.render(TEMPLATES / "my.cnf.epp", values))


@pytest.mark.parametrize("host", ["mysql001a", "mysql001b", "mysql001c"])
def test_shard_host_replicates_as_the_local_cluster_does(host: str) -> None:
    rendered = _my_cnf(host)
    cluster = _cluster_settings()
    assert {name: rendered.get(name) for name in REPLICATION_SETTINGS} == {
        name: cluster[name] for name in REPLICATION_SETTINGS
    }


@pytest.mark.parametrize("host", ["mysql001a", "mysql001b", "mysql001c"])
def test_shard_host_has_production_durability(host: str) -> None:
    rendered = _my_cnf(host)
    assert rendered["sync_binlog"] == "1"
    assert rendered["innodb_flush_log_at_trx_commit"] == "1"


def test_server_ids_come_from_the_address_and_differ_within_a_pair() -> None:
    hosts = yaml.safe_load(EXAMPLE_DEPLOY.read_text())["pinboard::hosts"]
    ids = {}
    for host in ("mysql001a", "mysql001b"):
        third, fourth = (int(octet) for octet in hosts[host].split(".")[2:])
        ids[host] = int(_my_cnf(host)["server_id"])
        assert ids[host] == third * 256 + fourth + 1
    assert ids["mysql001a"] != ids["mysql001b"]


def test_buffer_pool_is_seventy_percent_of_memory() -> None:
    memory = 61 * 2**30
    assert (
        _my_cnf("mysql001a", memory)["innodb_buffer_pool_size"] == f"{memory * 70 // 100 // 2**20}M"
    )


# -- nginx and the site ----------------------------------------------------------------


def _upload_limit() -> int:
    """DATA_UPLOAD_MAX_MEMORY_SIZE from pinboard/settings/base.py, without Django."""
    tree = ast.parse((ROOT / "pinboard" / "settings" / "base.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "DATA_UPLOAD_MAX_MEMORY_SIZE" for t in node.targets
        ):
            return int(eval(compile(ast.Expression(node.value), "base.py", "eval")))
    raise AssertionError("DATA_UPLOAD_MAX_MEMORY_SIZE is not in pinboard/settings/base.py")


def test_nginx_passes_the_sites_upload_limit_and_the_load_balancers_scheme() -> None:
    data = _hiera("production")
    size = str(data["profile::nginx::client_max_body_size"])
    units = {"k": 2**10, "m": 2**20, "g": 2**30}
    assert int(size[:-1]) * units[size[-1].lower()] == _upload_limit()

    site = checks.render(
        TEMPLATES / "nginx-site.conf.epp",
        {
            "site_domain": data["pinboard::site_domain"],
            "upstream": data["profile::pinboard::gunicorn::bind"],
            "client_max_body_size": size,
            "real_ip_from": data["profile::nginx::real_ip_from"],
            "static_root": "/var/lib/pinboard/collected-static",
        },
    )
    assert f"client_max_body_size {size};" in site
    assert f"server {data['profile::pinboard::gunicorn::bind']};" in site
    # The load balancer's https, not nginx's own http, or Django would redirect forever.
    assert "proxy_set_header X-Forwarded-Proto $http_x_forwarded_proto;" in site
    # The health check (the instance's address, plain HTTP) reaches the site as the site.
    readyz = site[site.index("location = /readyz") :]
    readyz = readyz[: readyz.index("}")]
    assert f"proxy_set_header Host {data['pinboard::site_domain']};" in readyz
    assert "proxy_set_header X-Forwarded-Proto https;" in readyz
    # nginx matches the decoded path (/read%79z too) and passes a client's request on with
    # the load balancer's X-Forwarded-For, by which the site refuses it (ops/health.py).
    assert "X-Forwarded-For" not in readyz and "proxy_pass_request_headers" not in readyz


# -- the environment file --------------------------------------------------------------


@pytest.mark.parametrize("fence", [None, "/usr/local/sbin/pinboard-fence-mysql eu-west-1 sg-0f staging"])  # fmt: skip
def test_the_fence_command_survives_a_shell_loading_the_environment(
    fence: str | None, tmp_path: Path
) -> None:
    """Operators load /etc/pinboard/env with `set -a; . /etc/pinboard/env`; systemd reads
    it too (and takes the same quotes off)."""
    values: dict[str, object] = {
        "topology": "zk://10.0.1.40:2181/pinboard",
        "broker_url": "redis://10.0.1.30:6379/0",
        "sessions_redis_url": "redis://10.0.1.30:6379/1",
        "site_domain": "staging.pinboard.example.com",
        "media_domain": "d111111abcdef8.cloudfront.net",
        "media_bucket": "pinboard-staging-media-example",
        "region": "eu-west-1",
        "memcached": "10.0.1.50:11211",
    }
    env = tmp_path / "env"
    env.write_text(checks.render(TEMPLATES / "env.epp", values | ({"fence_command": fence} if fence else {})))  # fmt: skip
    loaded = subprocess.run(
        ["sh", "-c", 'set -a; . "$1"; printf %s "${PINBOARD_FENCE_COMMAND-unset}"', "sh", str(env)],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"]},
        check=True,
    )
    assert loaded.stdout == (fence or "unset") and loaded.stderr == ""


# -- the generated Hiera file -----------------------------------------------------------


def test_example_deploy_documents_exactly_its_keys() -> None:
    text = EXAMPLE_DEPLOY.read_text()
    documented = set(re.findall(r"^#\s+(pinboard::\w+)", text, re.MULTILINE))
    assert documented == set(yaml.safe_load(text))


def test_example_deploy_names_an_address_for_every_host_it_mentions() -> None:
    data = yaml.safe_load(EXAMPLE_DEPLOY.read_text())
    hosts = data["pinboard::hosts"]
    for pair in data["pinboard::mysql_pairs"]:
        assert {pair["master"], *pair["replicas"]} <= set(hosts)
    for member in data["pinboard::zookeeper"]:
        assert hosts[member["name"]] == member["address"]


# -- every role, applied in noop --------------------------------------------------------

ROLES = {
    # role, environment, pinboard_host: resources its catalog must have, and must not.
    ("web", "staging", ""): (
        {"service[pinboard-gunicorn]", "service[nginx]", "exec[pinboard environment file]"},
        {
            "service[pinboard-celery]",
            "file[/usr/local/sbin/pinboard-fence-mysql]",
            "service[pinboard-guard]",
            "service[pinboard-binlog-archive]",
        },
    ),
    ("worker", "production", ""): (
        {
            "service[pinboard-celery]",
            "exec[pinboard environment file]",
            "file[/usr/local/sbin/pinboard-fence-mysql]",
            # The guard, the binary-log archiver, the backups' verification.
            "service[pinboard-guard]",
            "service[pinboard-binlog-archive]",
            "service[pinboard-backup-verify.timer]",
        },
        {"service[nginx]", "service[pinboard-gunicorn]", "service[pinboard-backup.timer]"},
    ),
    ("mysql_shard", "production", "mysql001a"): (
        # The release and its environment too, for the daily backup's manage.py.
        {
            "service[mariadb]",
            "file[/etc/mysql/mariadb.conf.d/60-pinboard.cnf]",
            "exec[pinboard environment file]",
            "service[pinboard-backup.timer]",
        },
        {"service[pinboard-gunicorn]", "service[pinboard-celery]", "service[pinboard-guard]"},
    ),
    ("memcached", "production", "memcached-users-1"): ({"service[memcached]"}, set()),
    ("redis", "production", "redis001a"): ({"service[redis-server]"}, set()),
    ("broker", "staging", "broker001"): ({"service[redis-server]"}, set()),
    ("zookeeper", "staging", "zk2"): (
        {"service[zookeeper]", "file[/var/lib/zookeeper/myid]"},
        set(),
    ),
    ("monitoring", "production", "monitoring"): (
        {"service[prometheus]", "file[/etc/prometheus/prometheus.yml]"},
        {"exec[pinboard environment file]", "service[prometheus-mysqld-exporter]"},
    ),
}


def _facts(role: str, environment: str, host: str) -> dict[str, str]:
    facts = {"pinboard_role": role, "pinboard_environment": environment}
    return facts | ({"pinboard_host": host} if host else {})


@pytest.mark.parametrize("case", ROLES, ids=lambda case: "-".join(filter(None, case)))
def test_role_applies_in_noop(case: tuple[str, str, str], tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("a noop run of a whole role reads root-only state (packages, services)")
    run = checks.noop_apply(PUPPET_DIR, tmp_path, _facts(*case))
    # --detailed-exitcodes: 0 nothing to do, 2 changes; 1, 4 and 6 are failures.
    assert run.returncode in (0, 2) and not run.errors, run.output
    assert "Compiled catalog" in run.output
    present, absent = ROLES[case]
    # And what serves each port the monitoring host scrapes on this role's hosts.
    assert present | monitoring.scraped_services(case[0]) <= run.resources, run.output
    assert not absent & run.resources


@pytest.mark.parametrize(
    ("role", "command"),
    [
        ("worker", "/usr/local/sbin/pinboard-fence-mysql eu-west-1 sg-0f1e2d3c4b5a69788 staging"),
        ("web", ""),
    ],
)
def test_only_worker_hosts_get_the_fence_command(role: str, command: str, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("a noop run of a whole role reads root-only state (packages, services)")
    tree = tmp_path / "puppet"
    shutil.copytree(PUPPET_DIR, tree)
    site = tree / "manifests" / "site.pp"
    site.write_text(
        site.read_text().replace(
            '  include "role::${role}"\n',
            '  include "role::${role}"\n'
            '  notify { "fence=[${profile::pinboard::app::fence_command}]": }\n',
        )
    )
    run = checks.noop_apply(tree, tmp_path / "state", _facts(role, "staging", ""))
    assert run.returncode in (0, 2) and not run.errors, run.output
    assert f"fence=[{command}]" in run.output


def test_a_host_without_a_role_is_refused(tmp_path: Path) -> None:
    run = checks.noop_apply(PUPPET_DIR, tmp_path, {"pinboard_environment": "staging"})
    assert run.returncode == 1
    assert "The fact pinboard_role is not set" in run.output
