"""Prometheus and two of its Debian exporters, for the local cluster and the tests: a
private Prometheus scraping the targets it is given, the node exporter, and MariaDB's."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolkit.servers.base import Availability, Server, find_program


def _packaged(program: str, package: str) -> Availability:
    if find_program(program) is None:
        return Availability(False, f"{program} is not installed (Debian package: {package})")
    return Availability(True)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False


class PrometheusServer(Server):
    """A private Prometheus: every ``interval`` it scrapes ``jobs`` (name -> ``host:port``
    targets, each at ``/metrics``) and evaluates ``rule_files``; samples kept a day."""

    name = "Prometheus"
    signatures = ("prometheus",)
    stop_timeout = 30.0

    def __init__(
        self,
        jobs: Mapping[str, Sequence[str]],
        *,
        rule_files: Sequence[Path] = (),
        interval: str = "5s",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.jobs = {job: list(targets) for job, targets in jobs.items()}
        self.rule_files = [str(Path(path).resolve()) for path in rule_files]
        self.interval = interval

    @classmethod
    def available(cls) -> Availability:
        return _packaged("prometheus", "prometheus")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def config_path(self) -> Path:
        assert self.tmpdir is not None, "the server is not started"
        return self.tmpdir / "prometheus.yml"

    def _configure(self) -> None:
        jobs = {"prometheus": [self.address], **self.jobs}
        config = {
            "global": {"scrape_interval": self.interval, "evaluation_interval": self.interval},
            "rule_files": self.rule_files,
            "scrape_configs": [
                {"job_name": job, "static_configs": [{"targets": targets}]}
                for job, targets in jobs.items()
            ],
        }
        self.config_path.write_text(json.dumps(config, indent=2))  # YAML reads JSON

    def _command(self) -> list[str]:
        prometheus = find_program("prometheus")
        assert prometheus is not None and self.tmpdir is not None
        return [
            prometheus,
            f"--config.file={self.config_path}",
            f"--storage.tsdb.path={self.tmpdir / 'data'}",
            "--storage.tsdb.retention.time=1d",
            f"--web.listen-address={self.address}",
            *self.extra_args,
        ]

    def _is_ready(self) -> bool:
        return _answers(f"{self.url}/-/ready")


class NodeExporter(Server):
    """Debian's node exporter: the machine's CPU, memory, disks and network."""

    name = "node exporter"
    signatures = ("prometheus-node-exporter",)

    @classmethod
    def available(cls) -> Availability:
        return _packaged("prometheus-node-exporter", "prometheus-node-exporter")

    def _command(self) -> list[str]:
        program = find_program("prometheus-node-exporter")
        assert program is not None
        return [program, f"--web.listen-address={self.address}", *self.extra_args]

    def _is_ready(self) -> bool:
        return _answers(f"http://{self.address}/metrics")


class MysqldExporter(Server):
    """Debian's MariaDB exporter for one server, logged in as ``login`` (``user:password``)
    over TCP to ``mysql_port``: status, replication, InnoDB."""

    name = "mysqld exporter"
    signatures = ("prometheus-mysqld-exporter",)

    def __init__(self, mysql_port: int, login: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mysql_port = mysql_port
        self.login = login

    @classmethod
    def available(cls) -> Availability:
        return _packaged("prometheus-mysqld-exporter", "prometheus-mysqld-exporter")

    @property
    def my_cnf(self) -> Path:
        assert self.tmpdir is not None, "the server is not started"
        return self.tmpdir / "my.cnf"

    def _configure(self) -> None:
        user, _, password = self.login.partition(":")
        self.my_cnf.touch(mode=0o600)
        self.my_cnf.write_text(
            f"[client]\nuser={user}\npassword={password}\nhost={self.host}\nport={self.mysql_port}\n"
        )

    def _command(self) -> list[str]:
        program = find_program("prometheus-mysqld-exporter")
        assert program is not None
        return [
            program,
            f"--config.my-cnf={self.my_cnf}",
            f"--web.listen-address={self.address}",
            *self.extra_args,
        ]

    def _is_ready(self) -> bool:
        return _answers(f"http://{self.address}/metrics")
