"""The fault injector (``make nemesis``): what the drills don't break, each case under API
write load on a fresh local cluster, every acknowledged write read back afterwards.

    python -m toolkit.nemesis            # every case, in the order below
    python -m toolkit.nemesis a c        # some of them
"""

from __future__ import annotations

from collections.abc import Callable

from toolkit.drills.base import Result

from .base import Nemesis
from .failover import (
    guard_cut_off,
    master_isolated,
    operator_cut_off,
    replica_restarted,
    replica_stalled,
    replica_stopped,
)
from .killed import operator_killed
from .operator import control_database_away, operator_paused
from .split import web_cut_off
from .transactions import slow_transaction
from .zookeeper import quorum_lost

Case = Callable[[Nemesis, Result], None]

#: Every case, by name, in the order ``make nemesis`` runs them.
CASES: dict[str, Case] = {
    "a": replica_stopped,
    "b": operator_cut_off,
    "c": master_isolated,
    "d": web_cut_off,
    "e": operator_killed,
    "f": slow_transaction,
    "g": replica_stalled,
    "h": operator_paused,
    "i": control_database_away,
    "j": quorum_lost,
    "k": replica_restarted,
    "l": guard_cut_off,
}
