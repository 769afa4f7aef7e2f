"""Rebuild the Redis follower graph from MySQL, or check it and repair drift.

Every graph key is computed from the mapping tables of exactly one shard (a
user's keys from their shard, a board's from its owner's, which is the
board's own), so the work goes shard by shard with bounded memory: compute
the expected contents of that shard's keys, compare each with Redis, rewrite
the keys that differ. A last pass over each instance deletes graph keys that
MySQL does not explain, and a pinner's feed keys (``homefeed:``, ``seen:``)
found on an instance the map does not route that pinner to: after a change of
the map or of ``vshard_of`` nobody reads them again, and the pinner's feed is
rebuilt on their next visit. ``wipe=True`` (rebuild) first deletes every graph key.

``shards=`` makes it a slice that can run alone and again (a long job's chunk,
social/jobs.py): the keys of the pinners and boards of those shards are
rewritten from MySQL, and any other key of theirs is deleted (their shard's
``users`` and ``boards`` tables say who they are). Keys of IDs with no object,
and keys left on an instance the map no longer routes to, need the whole graph
at once: they are left to a full sync's last pass.

Runbook: ``python manage.py follower_graph repair`` (or ``rebuild``) runs it as
a Celery job; ``--check`` reports drift without changing anything.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from shardstore.cache import CachedStore
from shardstore.ids import compose
from shardstore.interface import ShardAccess, StoreInterface
from shardstore.store import Store

from . import graph as keys
from .graph import FollowerGraph

GRAPH_PATTERNS = ("u:*", "b:*")
#: A pinner's feed keys (social.feeds): ``<prefix><user id>``.
FEED_PREFIXES = ("homefeed:", "seen:")


@dataclass
class SyncReport:
    keys_checked: int = 0
    keys_repaired: int = 0
    keys_removed: int = 0
    drift: list[str] = field(default_factory=list)  # the first few keys that differed

    def note(self, key: str) -> None:
        if len(self.drift) < 20:
            self.drift.append(key)


@dataclass
class _Expected:
    """Expected contents of one shard's graph keys: kind ("zset", "set", "hash") and members."""

    kinds: dict[str, str] = field(default_factory=dict)
    members: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    owner_of_key: dict[str, int] = field(default_factory=dict)  # the user whose instance holds it

    def put(self, kind: str, key: str, owner: int, member: int, score: int = 0) -> None:
        self.kinds[key] = kind
        self.owner_of_key[key] = owner
        self.members[key][member] = score

    def put_earliest(self, key: str, owner: int, member: int, sequence: int) -> None:
        """A sorted-set member scored by the first of its ``sequence``s (an implicit follow
        stands from the first board that made it)."""
        current = self.members[key].get(member)
        self.put(
            "zset", key, owner, member, sequence if current is None else min(current, sequence)
        )

    def keep_owners(self, accept: Callable[[int], bool]) -> None:
        """Forget the keys of owners ``accept`` refuses."""
        for key in [k for k, owner in self.owner_of_key.items() if not accept(owner)]:
            del self.owner_of_key[key], self.kinds[key]
            self.members.pop(key, None)


def sync_graph(
    store: StoreInterface,
    graph: FollowerGraph,
    *,
    repair: bool = True,
    wipe: bool = False,
    owners: Callable[[int], bool] | None = None,
    shards: Iterable[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SyncReport:
    """Make the Redis graph equal to what MySQL says (or, with ``repair=False``, report).

    ``owners`` limits the sync to the keys of the users it accepts (the pinners of
    moved virtual shards, say); stray keys are then left alone. ``shards`` limits it
    to the pinners of those shards, their stray keys included (see above).
    """
    report = SyncReport()
    if wipe and repair:
        for client in graph.shards.clients().values():
            _delete_graph_keys(client, keep=set())
    expected_on: dict[str, set[str]] = defaultdict(set)  # instance -> the graph keys it should hold
    walk = list(range(store.topology.shard_count) if shards is None else shards)
    for done, shard_id in enumerate(walk, 1):
        expected = _expected_for_shard(store, shard_id)
        if owners is not None:
            expected.keep_owners(owners)
        for key, owner in expected.owner_of_key.items():
            expected_on[graph.shards.instance_for(owner)].add(key)
        _compare_and_fix(graph, expected, report, repair=repair)
        if shards is not None:
            _delete_unexplained(store, graph, shard_id, expected, report, owners, repair=repair)
        if progress:
            progress(done, len(walk))
    if owners is not None or shards is not None:
        return report
    for instance, client in graph.shards.clients().items():
        wanted = expected_on[instance]
        report.keys_removed += _delete_graph_keys(
            client, keep=wanted, dry_run=not repair, report=report
        )
        report.keys_removed += _delete_misplaced_feeds(
            graph, instance, dry_run=not repair, report=report
        )
    return report


def _expected_for_shard(store: StoreInterface, shard_id: int) -> _Expected:
    expected = _Expected()
    for rows in store.mapping("user_follows_users").scan(shard_id):
        for follower, followee, sequence in rows:
            expected.put("zset", keys.following_key(follower), follower, followee, sequence)
    for rows in store.mapping("user_followed_by_users").scan(shard_id):
        for followee, follower, sequence in rows:
            expected.put("zset", keys.followers_key(followee), followee, follower, sequence)
    for rows in store.mapping("user_follows_boards").scan(shard_id):
        owners = _owners(store, [board for _, board, _ in rows])
        for follower, board, sequence in rows:
            expected.put("set", keys.boards_followed_key(follower), follower, board)
            if board in owners:  # an implicit follow of the board's owner, since the first board
                owner = owners[board]
                expected.put_earliest(
                    keys.implicit_following_key(follower), follower, owner, sequence
                )
    for rows in store.mapping("user_unfollows_boards").scan(shard_id):
        for follower, board, _ in rows:
            expected.put("set", keys.boards_unfollowed_key(follower), follower, board)
    for rows in store.mapping("board_followed_by_users").scan(shard_id):
        owners = _owners(store, [board for board, _, _ in rows])
        for board, follower, sequence in rows:
            if board in owners:
                owner = owners[board]
                expected.put("hash", keys.board_followers_key(board), owner, follower, sequence)
                expected.put_earliest(keys.implicit_followers_key(owner), owner, follower, sequence)
    for rows in store.mapping("board_unfollowed_by_users").scan(shard_id):
        owners = _owners(store, [board for board, _, _ in rows])
        for board, follower, _ in rows:
            if board in owners:
                expected.put("set", keys.board_unfollowers_key(board), owners[board], follower)
    return expected


USER_KEYS = (
    keys.following_key,
    keys.implicit_following_key,
    keys.followers_key,
    keys.implicit_followers_key,
    keys.boards_followed_key,
    keys.boards_unfollowed_key,
)
BOARD_KEYS = (keys.board_followers_key, keys.board_unfollowers_key)


def _delete_unexplained(
    store: StoreInterface,
    graph: FollowerGraph,
    shard_id: int,
    expected: _Expected,
    report: SyncReport,
    owners: Callable[[int], bool] | None,
    *,
    repair: bool,
) -> None:
    """Delete the graph keys of this shard's pinners and boards that MySQL does not explain."""
    candidates: dict[str, list[str]] = defaultdict(list)  # instance -> keys to look for
    for owner, board in _shard_owners(store, shard_id):
        if owners is not None and not owners(owner):
            continue
        names = [f(board) for f in BOARD_KEYS] if board else [f(owner) for f in USER_KEYS]
        instance = graph.shards.instance_for(owner)
        candidates[instance].extend(k for k in names if k not in expected.kinds)
    for instance, names in candidates.items():
        client = graph.shards.client(instance)
        for start in range(0, len(names), 500):
            chunk = names[start : start + 500]
            pipe = client.pipeline(transaction=False)
            for key in chunk:
                pipe.exists(key)
            present = [key for key, n in zip(chunk, pipe.execute(), strict=True) if n]
            for key in present:
                report.note(key)
            report.keys_removed += len(present)
            if repair and present:
                client.delete(*present)


def _shard_owners(store: StoreInterface, shard_id: int) -> Iterator[tuple[int, int]]:
    """``(user, 0)`` for each pinner of the shard, ``(owner, board)`` for each board, read
    from the shard's object tables (every row, a soft-deleted one too)."""
    access = store.store if isinstance(store, CachedStore) else store
    if not isinstance(access, Store):
        raise TypeError(f"a shard's pinners are read from a Store, not a {type(store).__name__}")
    catalog = store.catalog
    user, board = catalog.types["user"], catalog.types["board"]
    for local_id, _ in _rows(access, shard_id, user.table, data=False):
        yield compose(shard_id, user.type_id, local_id), 0
    for local_id, data in _rows(access, shard_id, board.table, data=True):
        owner = json.loads(data).get("owner_id")
        if isinstance(owner, int):
            yield owner, compose(shard_id, board.type_id, local_id)


def _rows(
    access: ShardAccess, shard_id: int, table: str, *, data: bool, batch: int = 1000
) -> Iterator[tuple[int, str]]:
    """``(local_id, data)`` of every row of an object table on one shard, in batches."""
    columns = "local_id, data" if data else "local_id, ''"
    sql = f"SELECT {columns} FROM {{db}}.{table} WHERE local_id > %s ORDER BY local_id LIMIT %s"
    last = 0
    while True:
        with access.session(shard_id) as session:
            rows = session.query(sql, (last, batch))
        for local_id, text in rows:
            yield int(local_id), text if isinstance(text, str) else bytes(text).decode()
        if len(rows) < batch:
            return
        last = int(rows[-1][0])


def _owners(store: StoreInterface, board_ids: list[int]) -> dict[int, int]:
    boards = store.objects("board").get_many(list(dict.fromkeys(board_ids)), include_inactive=True)
    return {b["id"]: int(b["owner_id"]) for b in boards}


def _compare_and_fix(
    graph: FollowerGraph, expected: _Expected, report: SyncReport, *, repair: bool
) -> None:
    by_instance: dict[str, list[str]] = defaultdict(list)
    for key, owner in expected.owner_of_key.items():
        by_instance[graph.shards.instance_for(owner)].append(key)
    for instance, key_names in by_instance.items():
        client = graph.shards.client(instance)
        for start in range(0, len(key_names), 500):
            chunk = key_names[start : start + 500]
            pipe = client.pipeline(transaction=False)
            for key in chunk:
                _read(pipe, expected.kinds[key], key)
            actual = pipe.execute(raise_on_error=False)
            fix = client.pipeline(transaction=True)
            for key, current in zip(chunk, actual, strict=True):
                report.keys_checked += 1
                want = expected.members[key]
                if _normalize(expected.kinds[key], current) == _normalize_expected(
                    expected.kinds[key], want
                ):
                    continue
                report.keys_repaired += 1
                report.note(key)
                fix.delete(key)
                _write(fix, expected.kinds[key], key, want)
            if repair and len(fix.command_stack):
                fix.execute()


def _read(pipe: Any, kind: str, key: str) -> None:
    if kind == "zset":
        pipe.zrange(key, 0, -1, withscores=True)
    elif kind == "set":
        pipe.smembers(key)
    else:
        pipe.hgetall(key)


def _write(pipe: Any, kind: str, key: str, members: dict[int, int]) -> None:
    if kind == "zset":
        pipe.zadd(key, {keys.member(m): s for m, s in members.items()})
    elif kind == "set":
        pipe.sadd(key, *(keys.member(m) for m in members))
    else:
        pipe.hset(key, mapping={keys.member(m): s for m, s in members.items()})


def _normalize(kind: str, current: Any) -> Any:
    """Members as stored (bytes), so a member written in another format is drift too."""
    if isinstance(current, Exception):  # e.g. WRONGTYPE: a key of another kind
        return None
    if kind == "zset":
        return {m: int(s) for m, s in current}
    if kind == "set":
        return set(current)
    return {m: int(s) for m, s in current.items()}


def _normalize_expected(kind: str, members: dict[int, int]) -> Any:
    stored = {keys.member(m).encode(): s for m, s in members.items()}
    return set(stored) if kind == "set" else stored


def _delete_graph_keys(
    client: Any, *, keep: set[str], dry_run: bool = False, report: SyncReport | None = None
) -> int:
    """Delete the graph keys of an instance that are not in ``keep``; returns how many."""
    removed = 0
    for pattern in GRAPH_PATTERNS:
        batch = []
        for raw in client.scan_iter(match=pattern, count=1000):
            key = raw.decode() if isinstance(raw, bytes) else raw
            if key not in keep:
                removed += 1
                if report is not None:
                    report.note(key)
                batch.append(key)
            if len(batch) >= 500 and not dry_run:
                client.delete(*batch)
                batch = []
        if batch and not dry_run:
            client.delete(*batch)
    return removed


def _delete_misplaced_feeds(
    graph: FollowerGraph, instance: str, *, dry_run: bool, report: SyncReport
) -> int:
    """Delete feed keys of pinners who live on another instance; returns how many."""
    client = graph.shards.client(instance)
    removed = 0
    for prefix in FEED_PREFIXES:
        batch = []
        for raw in client.scan_iter(match=prefix + "*", count=1000):
            key = raw.decode() if isinstance(raw, bytes) else raw
            owner = key.removeprefix(prefix)
            if not (owner.isascii() and owner.isdigit()):
                continue  # not a pinner's feed key: not ours to judge
            if graph.shards.instance_for(int(owner)) == instance:
                continue
            removed += 1
            report.note(key)
            if not dry_run:
                batch.append(key)
            if len(batch) >= 500:
                client.delete(*batch)
                batch = []
        if batch:
            client.delete(*batch)
    return removed
