"""The local cluster's monitoring: Prometheus, with the project's rules, scraping the site's
two process groups (each on a metrics port of its own, chosen free once and kept), the node
exporter and an exporter per MariaDB server. The console's overview draws its charts from
this Prometheus (``PINBOARD_PROMETHEUS_URL`` in the cluster's env)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from toolkit.cluster.plan import PROCESSES, SITE
from toolkit.processes import HOST, free_port
from toolkit.servers.base import Server
from toolkit.servers.prometheus import MysqldExporter, NodeExporter, PrometheusServer
from toolkit.site_processes import ROOT

RULES = ROOT / "infra" / "monitoring" / "rules"


class Cluster(Protocol):
    """What of ``toolkit.cluster.state.Cluster`` this module uses."""

    directory: Path
    state: dict[str, Any]
    secrets: dict[str, str]

    @property
    def mysql_servers(self) -> list[str]: ...

    def save(self) -> None: ...
    def port(self, name: str) -> int: ...


def metrics_env(cluster: Cluster, name: str) -> dict[str, str]:
    """What a site process (``web``, ``worker``) needs to serve its group's metrics."""
    directory = cluster.directory / name / "metrics"
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    return {
        "PINBOARD_METRICS_BIND": f"{HOST}:{metrics_port(cluster, name)}",
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
    }


def metrics_port(cluster: Cluster, name: str) -> int:
    """A port chosen free once for ``name`` (a site process's metrics, Prometheus's own:
    named in the env file before they first start) and kept."""
    ports: dict[str, int] = cluster.state.setdefault("metrics_ports", {})
    if name not in ports:
        ports[name] = free_port()
        cluster.save()
    return ports[name]


def build(cluster: Cluster, name: str, common: dict[str, Any]) -> Server:
    """The launcher of a monitoring process (``PROCESSES``' prometheus and exporters)."""
    kind = PROCESSES[name]
    if kind == "node_exporter":
        return NodeExporter(**common)
    if kind == "mysqld_exporter":
        server = name.removesuffix("-exporter")
        login = f"root:{cluster.secrets['root']}"
        return MysqldExporter(cluster.port(server), login, **common)
    common = {**common, "port": metrics_port(cluster, "prometheus")}
    return PrometheusServer(jobs(cluster), rule_files=sorted(RULES.glob("*.yml")), **common)


def jobs(cluster: Cluster) -> dict[str, list[str]]:
    """Prometheus's scrape jobs, named as on the monitoring host of the deploy."""
    return {
        **{name: [f"{HOST}:{metrics_port(cluster, name)}"] for name in SITE},
        "node": [f"{HOST}:{cluster.port('node-exporter')}"],
        "mysqld": [
            f"{HOST}:{cluster.port(f'{server}-exporter')}" for server in cluster.mysql_servers
        ],
    }


def prometheus_url(cluster: Cluster) -> str:
    return f"http://{HOST}:{metrics_port(cluster, 'prometheus')}"
