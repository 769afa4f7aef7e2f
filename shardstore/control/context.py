"""What every control operation runs against (``Control``): the config source, the stores,
the journal, the hosts' locks and the operator, with how to reach a MySQL server and fence
one. The ``shardstore`` commands (cli.py) and the site's console each make one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..backups.store import BackupStore
from ..interface import StoreInterface
from ..topology import Topology
from .config_source import ConfigSource
from .fencing import Fence
from .locks import Locks
from .mysql_hosts import MySQLHost
from .plans import Journal
from .redis_move import RedisKeys
from .replacement import Provision


@dataclass
class Control:
    """What control operations run against."""

    source: ConfigSource
    store: Callable[[], StoreInterface]
    connect: Callable[[Topology], StoreInterface]  # a store on another topology
    journal: Journal
    locks: Locks
    operator: str
    #: An operator's connection to a MySQL server, by its address in the shard map.
    mysql: Callable[[str], MySQLHost] = MySQLHost
    #: How an unreachable master is fenced before an emergency failover (``fencing.py``).
    fence: Fence | None = None
    #: What the site keeps in Redis, for ``redis-move`` (``redis_move.RedisKeys``).
    redis_keys: RedisKeys | None = None
    #: How the guard gets a new MySQL server when the map has no spare (``replacement.py``).
    provision: Provision | None = None
    #: Where the backups are: a rebuild copies from the newest fresh one (``replica_copy``).
    backups: BackupStore | None = None
