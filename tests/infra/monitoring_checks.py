"""The monitoring host's view of the deploy, for the tests: Prometheus's scrape jobs from
Hiera, the services that answer each job's port, the Terraform tier of each role, and
Prometheus's relabelling applied to a target's discovered labels."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from tests.infra.puppet_checks import PUPPET_DIR, ROOT

TERRAFORM = ROOT / "infra" / "terraform"
TEMPLATE = PUPPET_DIR / "modules" / "profile" / "templates" / "prometheus.yml.epp"
RULES = ROOT / "infra" / "monitoring" / "rules"

# The service that serves each job's port on the hosts it scrapes.
JOB_SERVICES = {
    "web": "service[pinboard-gunicorn]",
    "worker": "service[pinboard-celery]",
    "node": "service[prometheus-node-exporter]",
    "mysqld": "service[prometheus-mysqld-exporter]",
    "redis": "service[prometheus-redis-exporter]",
}


def common() -> dict[str, Any]:
    return yaml.safe_load((PUPPET_DIR / "data" / "common.yaml").read_text())


def scrape_jobs() -> dict[str, dict[str, Any]]:
    """Hiera's jobs: name => {port, roles}."""
    return common()["profile::prometheus::jobs"]


def roles() -> set[str]:
    """Every role Puppet knows (modules/role/manifests/<role>.pp)."""
    return {path.stem for path in (PUPPET_DIR / "modules" / "role" / "manifests").glob("*.pp")}


def scraped_services(role: str) -> set[str]:
    """The services a host of this role must run for the jobs that scrape it."""
    return {JOB_SERVICES[job] for job, spec in scrape_jobs().items() if role in spec["roles"]}


def tier_of_roles() -> dict[str, str]:
    """Role tag => Terraform module (each module's hosts are in the security group of its
    name: module.security.ids["<module>"])."""
    found = {}
    for main in sorted((TERRAFORM / "modules").glob("*/main.tf")):
        for role in re.findall(r'^\s*role\s*=\s*"(\w+)"', main.read_text(), re.MULTILINE):
            found[role] = main.parent.name
    return found


def render_values(environment: str, rules_dir: Path) -> dict[str, object]:
    """prometheus.yml.epp's parameters as profile::prometheus passes them."""
    data = common()
    return {
        "environment": environment,
        "region": "eu-west-1",
        "scrape_interval": data["profile::prometheus::scrape_interval"],
        "rules_dir": str(rules_dir),
        "listen": data["profile::prometheus::listen"],
        "host": "monitoring",
        "jobs": scrape_jobs(),
    }


def _expand(template: str, match: re.Match[str]) -> str:
    return re.sub(r"\$\{?(\d+)\}?", lambda ref: match.group(int(ref.group(1))) or "", template)


def relabel(configs: list[dict[str, Any]], discovered: dict[str, str]) -> dict[str, str]:
    """A target's labels after Prometheus's relabelling (the replace action, its defaults)
    and its defaults after it: instance from __address__, the __ labels dropped."""
    labels = dict(discovered)
    for config in configs:
        assert config.get("action", "replace") == "replace", config
        value = config.get("separator", ";").join(
            labels.get(name, "") for name in config.get("source_labels", [])
        )
        match = re.fullmatch(config.get("regex", "(.*)"), value)
        if match is None:
            continue
        result = _expand(config.get("replacement", "$1"), match)
        if result:
            labels[config["target_label"]] = result
        else:
            labels.pop(config["target_label"], None)
    labels.setdefault("instance", labels["__address__"])
    return {name: value for name, value in labels.items() if not name.startswith("__")}
