"""What the local cluster runs: its processes by name and kind, in the order ``up`` starts
them, the MariaDB masters and their replicas, its spares, where it lives by default and
the figures it is made with."""

from __future__ import annotations

from toolkit.processes import HOST
from toolkit.site_processes import ROOT

DEFAULT_DIR = ROOT / "var" / "cluster"
ZK_ROOT = "/pinboard"
SHARDS = 4096
#: Seconds before the broker hands a dead worker's tasks to another (see ``bring_up``).
BROKER_VISIBILITY_TIMEOUT = 60

#: Every process, by name, with its kind, in the order ``up`` starts them.
PROCESSES: dict[str, str] = {
    "zookeeper": "zookeeper",
    "db1a": "mariadb",
    "db1b": "mariadb",
    "db1c": "mariadb",
    "db2a": "mariadb",
    "db2b": "mariadb",
    "db2c": "mariadb",
    "spare1": "mariadb",
    "redis": "redis",
    "redis-replica": "redis",
    "broker": "redis",
    "memcached1": "memcached",
    "memcached2": "memcached",
    "worker": "celery",
    "web": "gunicorn",
    "archiver": "archiver",
    "backups": "backups",
    "node-exporter": "node_exporter",
    "db1a-exporter": "mysqld_exporter",
    "db1b-exporter": "mysqld_exporter",
    "db1c-exporter": "mysqld_exporter",
    "db2a-exporter": "mysqld_exporter",
    "db2b-exporter": "mysqld_exporter",
    "db2c-exporter": "mysqld_exporter",
    "spare1-exporter": "mysqld_exporter",
    "prometheus": "prometheus",
}
MARIADB = tuple(name for name, kind in PROCESSES.items() if kind == "mariadb")
#: Each master with the replicas that follow it when the cluster is made: two by default
#: (one may die and the other still acknowledges its commits), or the first alone.
RANGES = {"db1a": ("db1b", "db1c"), "db2a": ("db2b", "db2c")}
REPLICAS = 2
#: MariaDB servers in the shard map that serve no range: the guard makes one a master's
#: replica in the place of one that died (``shardstore/control/replacement.py``).
SPARES = ("spare1",)


def ranges(replicas: int) -> dict[str, tuple[str, ...]]:
    """Each master with its first ``replicas`` replicas of ``RANGES``."""
    if not 1 <= replicas <= REPLICAS:
        raise ValueError(f"a cluster's masters have 1 to {REPLICAS} replicas, not {replicas}")
    return {master: names[:replicas] for master, names in RANGES.items()}


def spare_names(count: int) -> tuple[str, ...]:
    """The first ``count`` of ``SPARES``."""
    if not 0 <= count <= len(SPARES):
        raise ValueError(f"a cluster has 0 to {len(SPARES)} spares, not {count}")
    return SPARES[:count]


SITE = ("worker", "web")
#: The binary-log archiver and the backup schedule (toolkit/cluster/backup_schedule.py):
#: started once the site runs, left out of a cluster made without backups.
BACKUPS = ("archiver", "backups")
#: Prometheus and the exporters it scrapes besides the site's processes (toolkit/cluster/
#: monitoring.py): started last, when every port they name is known.
MONITORING = tuple(
    name for name, kind in PROCESSES.items() if "prometheus" in kind or "exporter" in kind
)
SERVERS = tuple(name for name in PROCESSES if name not in (*SITE, *BACKUPS, *MONITORING))


def address(kind: str, port: int | None) -> str:
    """Where a process of ``kind`` answers, as ``status`` shows it."""
    if kind == "mariadb":
        return f"mysql://{HOST}:{port}"
    if kind == "redis":
        return f"redis://{HOST}:{port}/0"
    if kind == "gunicorn":
        return f"http://{HOST}:{port}/"
    if kind == "celery":
        return "the broker"
    if kind in BACKUPS:
        return "the backup store"
    if kind == "prometheus":
        return f"http://{HOST}:{port}/"
    return f"{HOST}:{port}"
