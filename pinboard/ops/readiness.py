"""Whether this process may take requests: what ``/readyz`` answers the load balancer.

Ready means the process serves a valid shard map (from its config source, or from its
local copy while the source is away: it keeps serving reads and MySQL writes, as the
README promises, and only its Redis writes refuse themselves past its lease) and
reaches every MySQL host that masters a range of it. Each host is asked with a
connection of its own and a short timeout (``Backend.probe``: ``SELECT 1``; an embedded
SQLite host answers while its directory is there), all at once, and the answer is kept
for ``CHECK_SECONDS``: the load balancer's checks, several a minute from each of its
nodes to each process, never load the hosts, and a check never waits on a request's
pooled connection.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from shardstore import Store
from shardstore.control import documents

from ..data_plane import follower_status, plane

#: Why a process with no shard map (or none it could build a plane from) is not ready.
NO_MAP = "no shard map in force"
#: How long a check of the hosts is reused.
CHECK_SECONDS = 2.0
#: How long a host is given to answer.
PROBE_SECONDS = 1.0

_clock = time.monotonic  # (tests move it on)
_lock = threading.Lock()


@dataclass(frozen=True)
class _Checked:
    store: Store
    version: int
    at: float
    reason: str | None


_last: _Checked | None = None


def not_ready() -> str | None:
    """Why this process must not take requests now, or None if it may."""
    try:
        store = plane().store.store
    except Exception:  # noqa: BLE001 - no plane at all is the answer, whatever stopped it
        return NO_MAP
    status = follower_status()
    if status is not None and documents.SHARDS not in status.versions:
        return NO_MAP
    return hosts_unreachable(store)


def hosts_unreachable(store: Store) -> str | None:
    """Which masters of ``store``'s map in force do not answer (None: all do), checked at
    most once every ``CHECK_SECONDS`` per map."""
    global _last
    with _lock:  # one check at a time: the others wait for its answer and reuse it
        version = store.topology.version
        last = _last
        if (
            last is not None
            and last.store is store
            and last.version == version
            and _clock() - last.at < CHECK_SECONDS
        ):
            return last.reason
        reason = _probe(store)
        _last = _Checked(store, version, _clock(), reason)
        return reason


def _probe(store: Store) -> str | None:
    topology = store.topology
    backends = store.backends()
    masters = sorted({r.master for r in topology.ranges})
    with ThreadPoolExecutor(len(masters)) as pool:
        answers = list(pool.map(lambda host: backends[host].probe(PROBE_SECONDS), masters))
    down = [f"{host} ({why})" for host, why in zip(masters, answers, strict=True) if why]
    if not down:
        return None
    return f"{len(down)} of {len(masters)} shard hosts unreachable: {', '.join(down)}"
