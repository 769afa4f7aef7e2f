"""The graph sync tests' oracle: a small follow graph written to MySQL through the mapping
tables, and the Redis graph it implies, computed here independently of shardstore's sync."""

from __future__ import annotations

from typing import Any

from shardstore import Store
from shardstore.ids import shard_of
from social.graph import FollowerGraph

from .vshard_users import HIGH, user


class World:
    """The follow graph written to MySQL, and the Redis graph it implies."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.a = user(11, shard=1)
        self.b = user(HIGH + 12, shard=9)
        self.c = user(13, shard=12)
        self.d = user(HIGH + 14, shard=2)
        self.e = user(15, shard=9)
        self.owner_of: dict[int, int] = {}
        boards = store.objects("board")

        def board(owner: int, title: str) -> int:
            board_id = boards.create(shard_of(owner), {"owner_id": owner, "title": title})
            self.owner_of[board_id] = owner
            return board_id

        self.b1, self.b2, self.b3 = board(self.b, "b1"), board(self.b, "b2"), board(self.b, "b3")
        self.c1 = board(self.c, "c1")
        self.user_follows: list[tuple[int, int, int]] = []
        self.board_follows: list[tuple[int, int, int]] = []
        self.board_unfollows: list[tuple[int, int, int]] = []
        for follower, followee, seq in [
            (self.a, self.b, 1_700_000_000_000_100),
            (self.a, self.c, 1_700_000_000_000_110),
            (self.d, self.b, 1_700_000_000_000_120),
            (self.e, self.a, 1_700_000_000_000_130),
        ]:
            self.follow_user(follower, followee, seq)
        for follower, board_id, seq in [
            (self.c, self.b1, 1_700_000_000_000_200),
            (self.c, self.b2, 1_700_000_000_000_150),  # C's first follow of a B board
            (self.e, self.b1, 1_700_000_000_000_250),
            (self.d, self.c1, 1_700_000_000_000_300),
        ]:
            self.follow_board(follower, board_id, seq)
        for follower, board_id, seq in [
            (self.a, self.b2, 1_700_000_000_000_400),
            (self.d, self.b3, 1_700_000_000_000_410),
        ]:
            self.unfollow_board(follower, board_id, seq)

    def follow_user(self, follower: int, followee: int, seq: int) -> None:
        self.store.mapping("user_follows_users").add(follower, followee, sequence=seq)
        self.user_follows.append((follower, followee, seq))

    def follow_board(self, follower: int, board_id: int, seq: int) -> None:
        self.store.mapping("user_follows_boards").add(follower, board_id, sequence=seq)
        self.board_follows.append((follower, board_id, seq))

    def unfollow_board(self, follower: int, board_id: int, seq: int) -> None:
        self.store.mapping("user_unfollows_boards").add(follower, board_id, sequence=seq)
        self.board_unfollows.append((follower, board_id, seq))

    def unfollow_user(self, follower: int, followee: int) -> None:
        self.store.mapping("user_follows_users").remove(follower, followee)
        self.user_follows = [f for f in self.user_follows if f[:2] != (follower, followee)]

    def expected(self) -> dict[str, tuple[str, Any]]:
        """Key -> (type, contents) of the whole Redis graph."""
        out: dict[str, tuple[str, Any]] = {}

        def put(kind: str, key: str, member: int, score: int = 0, keep_min: bool = False) -> None:
            current = out.setdefault(key, (kind, {} if kind != "set" else set()))[1]
            if kind == "set":
                current.add(member)
            elif keep_min and member in current:
                current[member] = min(current[member], score)
            else:
                current[member] = score

        for f, t, s in self.user_follows:
            put("zset", f"u:{f}:fe", t, s)
            put("zset", f"u:{t}:fre", f, s)
        for f, board_id, s in self.board_follows:
            owner = self.owner_of[board_id]
            put("set", f"u:{f}:bf", board_id)
            put("hash", f"b:{board_id}:f", f, s)
            put("zset", f"u:{f}:fi", owner, s, keep_min=True)
            put("zset", f"u:{owner}:fri", f, s, keep_min=True)
        for f, board_id, _ in self.board_unfollows:
            put("set", f"u:{f}:bu", board_id)
            put("set", f"b:{board_id}:u", f)
        return out

    def instance_of_key(self, graph: FollowerGraph, key: str) -> str:
        kind, number, _ = key.split(":")
        user_id = int(number) if kind == "u" else self.owner_of[int(number)]
        return graph.shards.instance_for(user_id)


def dump(graph: FollowerGraph, *, every: bool = False) -> dict[str, dict[str, tuple[str, Any]]]:
    """Every graph key (``u:*``, ``b:*``; with ``every``, all keys) of every instance."""
    out: dict[str, dict[str, tuple[str, Any]]] = {}
    for name, client in graph.shards.clients().items():
        keys: dict[str, tuple[str, Any]] = {}
        for raw in client.scan_iter(count=1000):
            key = raw.decode()
            if not every and not key.startswith(("u:", "b:")):
                continue
            kind = client.type(key).decode()
            if kind == "zset":
                value: Any = {int(m): int(s) for m, s in client.zrange(key, 0, -1, withscores=True)}
            elif kind == "set":
                value = {int(m) for m in client.smembers(key)}
            elif kind == "hash":
                value = {int(f): int(v) for f, v in client.hgetall(key).items()}
            else:
                value = client.dump(key)
            keys[key] = (kind, value)
        out[name] = keys
    return out


def expected_dump(world: World, graph: FollowerGraph) -> dict[str, dict[str, tuple[str, Any]]]:
    out: dict[str, dict[str, tuple[str, Any]]] = {name: {} for name in graph.shards.clients()}
    for key, value in world.expected().items():
        out[world.instance_of_key(graph, key)][key] = value
    return out
