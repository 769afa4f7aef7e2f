"""The monitoring host (infra/puppet: role::monitoring; infra/terraform: modules/monitoring):
its Prometheus configuration passes promtool and scrapes every host on the port that host
serves, each target labelled by role and host; only its security group reaches those
ports; and its rules are checked before they are installed."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import hcl2
import pytest
import yaml

from tests.conftest import unavailable
from tests.infra import monitoring_checks as monitoring
from tests.infra import puppet_checks
from tests.infra import terraform_checks as terraform
from tests.infra.monitoring_checks import RULES, TERRAFORM

PROFILE_FILES = puppet_checks.PUPPET_DIR / "modules" / "profile" / "files"
# Prometheus's web interface and every scraped port: none may be open but to monitoring.
METRICS_PORTS = range(9090, 9200)


def _promtool() -> str:
    promtool = shutil.which("promtool")
    if promtool is None:
        unavailable("promtool", "promtool is not on PATH (Debian package: prometheus)")
    return promtool


def _render(environment: str, rules_dir: Path = RULES) -> str:
    tool = puppet_checks.missing_tool()
    if tool is not None:
        unavailable(tool, f"{tool} is not on PATH (Debian packages: puppet, puppet-lint)")
    values = monitoring.render_values(environment, rules_dir)
    return puppet_checks.render(monitoring.TEMPLATE, values)


# -- Prometheus's configuration ---------------------------------------------------------


@pytest.mark.parametrize("environment", ["staging", "production"])
def test_prometheus_config_passes_promtool(environment: str, tmp_path: Path) -> None:
    """With the repository's rules as the host loads them (promtool checks those too)."""
    config = tmp_path / "prometheus.yml"
    config.write_text(_render(environment))
    checked = subprocess.run(
        [_promtool(), "check", "config", str(config)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_config_promtool_refuses_is_caught(tmp_path: Path) -> None:
    config = tmp_path / "prometheus.yml"
    config.write_text(_render("staging").replace("scrape_interval: 15s", "scrape_interval: 15"))
    checked = subprocess.run([_promtool(), "check", "config", str(config)], capture_output=True)
    assert checked.returncode != 0


def _project_tag() -> str:
    provider = terraform._blocks(terraform.load_directory(TERRAFORM), "provider")["aws"]
    return str(terraform._unquote(provider["default_tags"][0]["tags"]["Project"]))


def test_every_job_finds_its_roles_in_this_environment_on_its_port() -> None:
    config = yaml.safe_load(_render("production"))
    assert config["global"]["scrape_interval"] == "15s"
    assert config["rule_files"] == [f"{RULES}/*.yml"]
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert set(jobs) == set(monitoring.scrape_jobs()) | {"prometheus"}
    for name, spec in monitoring.scrape_jobs().items():
        (discovery,) = jobs[name]["ec2_sd_configs"]
        assert discovery["port"] == spec["port"]
        filters = {f["name"]: f["values"] for f in discovery["filters"]}
        assert filters == {
            "tag:Project": [_project_tag()],
            "tag:Environment": ["production"],
            "tag:Role": spec["roles"],
            "instance-state-name": ["running"],
        }


def test_each_job_scrapes_a_port_its_hosts_serve() -> None:
    data = monitoring.common()
    served = {
        "web": data["profile::pinboard::gunicorn::metrics_port"],
        "worker": data["profile::pinboard::celery::metrics_port"],
        "node": data["profile::exporter::node::port"],
        "mysqld": data["profile::exporter::mysqld::port"],
        "redis": data["profile::exporter::redis::port"],
    }
    jobs = monitoring.scrape_jobs()
    assert {job: spec["port"] for job, spec in jobs.items()} == served
    # Every host has a node exporter; every role a job names exists.
    assert set(jobs["node"]["roles"]) == monitoring.roles()
    assert all(set(spec["roles"]) <= monitoring.roles() for spec in jobs.values())


SHARD_HOST = {
    "__address__": "10.0.1.10:9104",
    "__meta_ec2_tag_Role": "mysql_shard",
    "__meta_ec2_tag_Name": "mysql001a",
    "__meta_ec2_private_dns_name": "ip-10-0-1-10.eu-west-1.compute.internal",
}
WEB_HOST = {
    "__address__": "10.0.2.33:9108",
    "__meta_ec2_tag_Role": "web",
    "__meta_ec2_tag_Name": "pinboard-production-web",
    "__meta_ec2_tag_aws_autoscaling_groupName": "pinboard-production-web",
    "__meta_ec2_private_dns_name": "ip-10-0-2-33.eu-west-1.compute.internal",
}


@pytest.mark.parametrize(
    ("job", "discovered", "labels"),
    [
        ("mysqld", SHARD_HOST, {"role": "mysql_shard", "instance": "mysql001a"}),
        ("web", WEB_HOST, {"role": "web", "instance": "ip-10-0-2-33.eu-west-1.compute.internal"}),
    ],
    ids=["named-host", "autoscaled-host"],
)
def test_targets_are_labelled_by_role_and_host(
    job: str, discovered: dict[str, str], labels: dict[str, str]
) -> None:
    config = yaml.safe_load(_render("production"))
    (scrape,) = [c for c in config["scrape_configs"] if c["job_name"] == job]
    assert monitoring.relabel(scrape["relabel_configs"], discovered) == labels


# -- who reaches the ports (Terraform) ---------------------------------------------------


def _security() -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The security module's flows (unquoted) and its ingress rules."""
    parsed = terraform.load_directory(TERRAFORM / "modules" / "security")
    (flows,) = [b["flows"] for doc in parsed for b in doc.get("locals", []) if "flows" in b]
    unquoted = {
        name: {key: terraform._unquote(value) for key, value in flow.items()}
        for name, flow in flows.items()
    }
    rules = list(terraform._resources(parsed, "aws_vpc_security_group_ingress_rule").values())
    return unquoted, rules


def test_only_the_monitoring_group_reaches_the_metrics_ports() -> None:
    flows, rules = _security()
    scrapes = {
        (f["from"], f["to"], f["port"]) for f in flows.values() if f["port"] in METRICS_PORTS
    }
    tiers = monitoring.tier_of_roles()
    expected = {
        ("monitoring", tiers[role], spec["port"])
        for spec in monitoring.scrape_jobs().values()
        for role in spec["roles"]
        if tiers[role] != "monitoring"  # its own node exporter, over loopback
    }
    assert scrapes == expected
    assert not [f for f in flows.values() if f["to"] == "monitoring"]  # nothing reaches it
    # The rules open to addresses (the internet: the load balancer's) are not those ports.
    by_address = [rule for rule in rules if "cidr_ipv4" in rule or "cidr_ipv6" in rule]
    assert by_address and all(
        rule["from_port"] == rule["to_port"] and rule["from_port"] not in METRICS_PORTS
        for rule in by_address
    )


def test_the_load_balancer_reaches_nginx_alone() -> None:
    """The ALB forwards to port 80 (nginx, then gunicorn on loopback), never to a metrics
    port: /metrics through it is the site's own page, not the metrics."""
    flows, _ = _security()
    assert {(f["to"], f["port"]) for f in flows.values() if f["from"] == "alb"} == {("web", 80)}
    web = terraform.load_directory(TERRAFORM / "modules" / "web")
    (group,) = terraform._resources(web, "aws_lb_target_group").values()
    assert group["port"] == 80
    assert monitoring.common()["profile::pinboard::gunicorn::bind"].startswith("127.0.0.1:")


def test_the_monitoring_host_may_discover_and_keeps_its_samples_on_its_volume() -> None:
    main = (TERRAFORM / "main.tf").read_text()
    assert 'security_group     = module.security.ids["monitoring"]' in main
    assert 'instance_profile   = module.iam.instance_profiles["monitoring"]' in main
    iam = terraform.load_directory(TERRAFORM / "modules" / "iam")
    (scrapers,) = [b["scrapers"] for doc in iam for b in doc.get("locals", []) if "scrapers" in b]
    assert [terraform._unquote(s) for s in scrapers] == ["monitoring"]
    host = (TERRAFORM / "modules" / "monitoring" / "main.tf").read_text()
    data = monitoring.common()
    assert f'mount_point = "{data["profile::prometheus::mountpoint"]}"' in host
    # Prometheus's size limit (GB: GiB to Prometheus) stays below every volume's size.
    retention = data["profile::prometheus::retention_size"]
    assert retention.endswith("GB")
    variables = terraform._blocks(terraform.load_directory(TERRAFORM), "variable")
    sizes = [variables["monitoring_data_volume_size"]["default"]]
    for tfvars in (TERRAFORM / "environments").glob("*.tfvars"):
        with tfvars.open() as f:
            sizes.append(hcl2.load(f)["monitoring_data_volume_size"])
    assert all(int(retention[:-2]) < size for size in sizes)


# -- the release's rules -----------------------------------------------------------------

RULES_SCRIPT = PROFILE_FILES / "pinboard-prometheus-rules"
GOOD = "groups:\n  - name: up\n    rules:\n      - record: job:up:sum\n        expr: sum by (job) (up)\n"  # fmt: skip
BROKEN = "groups:\n  - name: up\n    rules:\n      - record: job:up:sum\n        expr: sum by (job (up)\n"  # fmt: skip


def _release(path: Path, files: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))


def _install_rules(workdir: Path, target: Path) -> subprocess.CompletedProcess[str]:
    """The script with an `aws` that prints workdir/release.tar.gz for any s3 cp."""
    bin_dir = workdir / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "aws").write_text(f'#!/bin/sh\ncat "{workdir}/release.tar.gz"\n')
    (bin_dir / "aws").chmod(0o755)
    _promtool()
    return subprocess.run(
        [
            "sh",
            str(RULES_SCRIPT),
            "eu-west-1",
            "s3://artifacts/staging/releases/x.tar.gz",
            str(target),
        ],
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_releases_rules_are_installed_once_checked(tmp_path: Path) -> None:
    _release(
        tmp_path / "release.tar.gz",
        {
            "manage.py": "",
            "infra/monitoring/rules/up.yml": GOOD,
            "infra/monitoring/rules/README.md": "",
        },
    )
    target = tmp_path / "rules.d" / "2015.06.01-0a1b2c3"
    installed = _install_rules(tmp_path, target)
    assert installed.returncode == 0, installed.stderr
    assert sorted(p.name for p in target.iterdir()) == ["README.md", "up.yml"]
    assert (target / "up.yml").read_text() == GOOD
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no .new left
    # Installed once: a second run refuses to touch the directory Prometheus reads.
    assert _install_rules(tmp_path, target).returncode != 0
    assert (target / "up.yml").read_text() == GOOD


@pytest.mark.parametrize(
    "files",
    [{"infra/monitoring/rules/up.yml": BROKEN}, {"manage.py": ""}],
    ids=["rule-promtool-refuses", "no-rules-directory"],
)
def test_a_release_whose_rules_fail_installs_nothing(files: dict[str, str], tmp_path: Path) -> None:
    _release(tmp_path / "release.tar.gz", files)
    target = tmp_path / "rules.d" / "2015.06.01-0a1b2c3"
    target.parent.mkdir()
    assert _install_rules(tmp_path, target).returncode != 0
    assert list(target.parent.iterdir()) == []
