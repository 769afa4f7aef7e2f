"""Fault drills against the local cluster (``make cluster``): each breaks one thing under a
steady load through the site's API (toolkit/load/), checks every write the site
acknowledged, and prints its figures in one block.

    python -m toolkit.drills                      # every drill, in the order below
    python -m toolkit.drills memcached planned    # some of them
    make drills

``memcached``  a cache server killed and restarted, then frozen and thawed: no error, no
               stale value served once it is back;
``redis``      the follower graph's Redis killed and wiped: graph and home feeds rebuilt
               to exactly the MySQL state;
``celery``     the Celery worker killed mid fan-out: no feed entry lost, none twice;
``replica``    one of a master's two replicas killed (``kill -9``), two guards running:
               its shards keep taking writes (the other replica acknowledges), nothing
               lost, the other master and the reads undisturbed; with no command typed,
               the guard puts the map's spare in its place, and the dead one, started
               again, is the next spare;
``strict``     both replicas of a strict range killed: its shards take no write, each
               refused within the read timeout and soon at once, every other write and
               every read undisturbed, nothing lost; writable again once they are back;
``degrade``    the same under ``degrade-after 2``: its shards wait at most 2 s, then its
               master commits alone (degraded) until both are back; nothing lost;
``verify``     a range's backup verified (restored with the archive, caught up, compared
               with its master); one part corrupted, it fails and its alert fires;
``bad-delete`` a pinner's board and pin deleted in MySQL by a "bug", under load:
               ``restore-shard`` to the second before names them, ``--copy-back``
               writes them back, every acknowledged write, later ones too, intact;
``planned``    a planned failover: nothing lost, the other master untouched, the moved
               shards writable again within 3 s, the old master a replica;
``split``      on 200,000 bulk-loaded pins, a host's replica takes half of its shards,
               then the split is reverted (a cut-back over its reverse stream) and
               cleaned up, the replica rebuilt (``shardstore rebuild``) and the host
               split again: diffs clean, read-only windows at most 2 s on the moving
               shards only, both splits and the revert, nothing lost, no write on a
               host that gave its shard up;
``emergency``  a master killed (``kill -9``) with two guards running and no command
               typed: failed over by the guard, nothing acknowledged lost, writable
               again within 30 s, the old master fenced when it comes back;
``rebuild``    that old master wiped, rebuilt from empty as its new master's replica
               (``shardstore rebuild``), then failed back to as planned: nothing lost,
               the pair whole and semi-synchronous again;
``lost``       every host of a range killed and wiped under load, restored onto the
               spare from its backup and archive: nothing acknowledged more than 5 s
               before the loss missing, the later ones counted, the RTO printed. Last:
               its range is left on the spare alone.

Drills pick their targets from the shard map in force and restore what they broke when
they can (a killed process is started again), so they run in any order and again, with
one limit: the split drill ends with its master split in two (the host keeps one replica,
the new master has none), so it uses up one of the cluster's two masters with two
replicas. The emergency
drill's pair is made whole by the rebuild drill after it.
"""

from __future__ import annotations

from collections.abc import Callable

from .backups import bad_delete, range_lost, verify
from .base import Drills, Result
from .caches import memcached
from .failover import emergency, planned
from .fanout import fanout
from .graph import redis_wipe
from .rebuild import rebuild
from .replica import both_replicas_killed, degraded, replica_killed
from .split import split

Drill = Callable[[Drills, Result], None]

#: Every drill, by name, in the order ``make drills`` runs them.
DRILLS: dict[str, Drill] = {
    "memcached": memcached,
    "redis": redis_wipe,
    "celery": fanout,
    "replica": replica_killed,
    "strict": both_replicas_killed,
    "degrade": degraded,
    "verify": verify,
    "bad-delete": bad_delete,
    "planned": planned,
    "split": split,
    "emergency": emergency,
    "rebuild": rebuild,
    "lost": range_lost,
}
