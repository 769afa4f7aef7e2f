"""Pins bulk-loaded straight into a host's shard databases, so that a drill measures an
operation on shards of a size, not on empty ones: multi-row INSERTs of pin objects as the
store writes them (``local_id`` from the table's counter, the object JSON in ``data``),
a few shards per transaction (each commit waits for the replica's acknowledgement)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

from shardstore import Topology
from shardstore.topology import database_name

from .base import Drills

#: Shards written in one transaction.
SHARDS_PER_COMMIT = 32


def pin(n: int, shard: int) -> str:
    """A pin's object JSON, shaped like the site's (on no board: nothing lists it)."""
    return json.dumps(
        {
            "description": f"Bulk-loaded pin #{n}",
            "link": f"https://example.com/pins/{n}",
            "image": "",
            "board_id": 0,
            "owner_id": 0,
            "created_at": datetime.now(UTC).isoformat(),
            "shard": shard,
        },
        separators=(",", ":"),
    )


def load_pins(d: Drills, topology: Topology, host: str, shards: list[int], total: int) -> str:
    """``total`` pins spread evenly over ``shards`` (mastered by ``host``), and its replica
    caught up with them; a line saying how many and how long."""
    began = time.monotonic()
    each, extra = divmod(total, len(shards))
    replica = next(r.replicas[0] for r in topology.ranges if r.master == host and r.replicas)
    with d.admin(topology, host) as m:
        for start in range(0, len(shards), SHARDS_PER_COMMIT):
            m.query("BEGIN")
            for index in range(start, min(start + SHARDS_PER_COMMIT, len(shards))):
                shard, count = shards[index], each + (index < extra)
                if not count:
                    continue
                rows = [pin(index * (each + 1) + k, shard) for k in range(count)]
                values = ",".join(["(%s)"] * count)
                m.query(f"INSERT INTO {database_name(shard)}.pins (data) VALUES {values}", tuple(rows))  # fmt: skip
            m.query("COMMIT")
        position = m.gtid_binlog_pos()
    loaded = time.monotonic() - began
    with d.admin(topology, replica) as r:
        r.wait_for(position, 300)
    return (
        f"{total:,} pins bulk-loaded on {host}'s {len(shards):,} shards in {loaded:.1f} s,"
        f" {replica} caught up {time.monotonic() - began - loaded:.1f} s later"
    )
