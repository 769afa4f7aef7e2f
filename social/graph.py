"""The follower graph on Redis, as Pinterest's follower service kept it (2013).

Per user: sorted sets scored by time of the users they follow explicitly
(``u:<id>:fe``) and implicitly through some of their boards (``u:<id>:fi``),
of their explicit followers (``u:<id>:fre``) and implicit followers
(``u:<id>:fri``); sets of the boards they follow (``u:<id>:bf``) and unfollowed
(``u:<id>:bu``). Per board, with its owner's keys: a hash of explicit
followers (``b:<id>:f``) and a set of unfollowers (``b:<id>:u``).

The MySQL mapping tables stay the source of truth: callers write them first,
then mirror the change here with an ``edit()`` whose commands run as one
MULTI per Redis instance. ``rebuild`` and ``repair`` (graph_sync.py) restore
this graph from MySQL.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from shardstore import cursors
from shardstore.interface import Page
from shardstore.redis_shards import RedisShards


def member(object_id: int) -> str:
    """How an ID is stored in the graph's sets, hashes and sorted sets: zero-padded, so
    Redis's order of members with equal scores (by bytes) is their numeric order."""
    return f"{object_id:020d}"


def following_key(user_id: int) -> str:
    return f"u:{user_id}:fe"


def implicit_following_key(user_id: int) -> str:
    return f"u:{user_id}:fi"


def followers_key(user_id: int) -> str:
    return f"u:{user_id}:fre"


def implicit_followers_key(user_id: int) -> str:
    return f"u:{user_id}:fri"


def boards_followed_key(user_id: int) -> str:
    return f"u:{user_id}:bf"


def boards_unfollowed_key(user_id: int) -> str:
    return f"u:{user_id}:bu"


def board_followers_key(board_id: int) -> str:
    return f"b:{board_id}:f"


def board_unfollowers_key(board_id: int) -> str:
    return f"b:{board_id}:u"


class GraphEdit:
    """Commands collected by Redis instance, run as one MULTI/EXEC per instance."""

    def __init__(self, shards: RedisShards) -> None:
        self._shards = shards
        self._commands: dict[str, list[tuple[str, tuple[Any, ...]]]] = defaultdict(list)

    def _on(self, user_id: int, command: str, *args: Any) -> None:
        self._commands[self._shards.instance_for(user_id)].append((command, args))

    def user_follow(self, follower: int, followee: int, on: bool, score: int) -> GraphEdit:
        if on:
            self._on(follower, "zadd", following_key(follower), {member(followee): score})
            self._on(followee, "zadd", followers_key(followee), {member(follower): score})
        else:
            self._on(follower, "zrem", following_key(follower), member(followee))
            self._on(followee, "zrem", followers_key(followee), member(follower))
        return self

    def implicit_follow(self, follower: int, followee: int, on: bool, score: int) -> GraphEdit:
        if on:
            self._on(follower, "zadd", implicit_following_key(follower), {member(followee): score})
            self._on(followee, "zadd", implicit_followers_key(followee), {member(follower): score})
        else:
            self._on(follower, "zrem", implicit_following_key(follower), member(followee))
            self._on(followee, "zrem", implicit_followers_key(followee), member(follower))
        return self

    def board_follow(
        self, follower: int, board: int, owner: int, on: bool, score: int
    ) -> GraphEdit:
        if on:
            self._on(follower, "sadd", boards_followed_key(follower), member(board))
            self._on(owner, "hset", board_followers_key(board), member(follower), score)
        else:
            self._on(follower, "srem", boards_followed_key(follower), member(board))
            self._on(owner, "hdel", board_followers_key(board), member(follower))
        return self

    def board_unfollow(self, follower: int, board: int, owner: int, on: bool) -> GraphEdit:
        if on:
            self._on(follower, "sadd", boards_unfollowed_key(follower), member(board))
            self._on(owner, "sadd", board_unfollowers_key(board), member(follower))
        else:
            self._on(follower, "srem", boards_unfollowed_key(follower), member(board))
            self._on(owner, "srem", board_unfollowers_key(board), member(follower))
        return self

    def commit(self) -> None:
        for instance, commands in self._commands.items():
            pipe = self._shards.client(instance).pipeline(transaction=True)
            for command, args in commands:
                getattr(pipe, command)(*args)
            pipe.execute()
            self._shards.count_call()
        self._commands.clear()


class FollowerGraph:
    """Queries of seed 004, each one round trip per Redis instance touched."""

    def __init__(self, shards: RedisShards) -> None:
        self.shards = shards

    def edit(self) -> GraphEdit:
        return GraphEdit(self.shards)

    def _client(self, user_id: int) -> Any:
        """The client for a user's instance, counting the one round trip about to be made."""
        self.shards.count_call()
        return self.shards.client_for(user_id)

    # -- point and filter queries -------------------------------------------

    def follows_user(self, follower: int, followee: int) -> bool:
        return self._client(follower).zscore(following_key(follower), member(followee)) is not None

    def followed_among(self, follower: int, candidates: list[int]) -> list[int]:
        """Which of ``candidates`` ``follower`` follows explicitly (ZMSCORE: one call)."""
        if not candidates:
            return []
        scores = self._client(follower).zmscore(
            following_key(follower), [member(c) for c in candidates]
        )
        return [c for c, score in zip(candidates, scores, strict=True) if score is not None]

    def follows_board(self, follower: int, board: int, owner: int) -> bool:
        """Explicitly, or through its owner and not unfollowed (one pipelined call)."""
        pipe = self._client(follower).pipeline(transaction=False)
        pipe.sismember(boards_followed_key(follower), member(board))
        pipe.zscore(following_key(follower), member(owner))
        pipe.sismember(boards_unfollowed_key(follower), member(board))
        explicit, through_owner, unfollowed = pipe.execute()
        return bool(explicit) or (through_owner is not None and not unfollowed)

    # -- counts ---------------------------------------------------------------

    def user_counts(self, user_id: int) -> dict[str, int]:
        pipe = self._client(user_id).pipeline(transaction=False)
        for key in (following_key, followers_key, implicit_following_key, implicit_followers_key):
            pipe.zcard(key(user_id))
        following, followers, implicit_following, implicit_followers = pipe.execute()
        return {
            "following": following,
            "followers": followers,
            "implicit_following": implicit_following,
            "implicit_followers": implicit_followers,
        }

    def board_follower_count(self, board: int, owner: int) -> int:
        """Explicit board followers + the owner's followers - unfollowers (disjoint sets)."""
        pipe = self._client(owner).pipeline(transaction=False)
        pipe.hlen(board_followers_key(board))
        pipe.zcard(followers_key(owner))
        pipe.scard(board_unfollowers_key(board))
        explicit, owner_followers, unfollowers = pipe.execute()
        return int(explicit + owner_followers - unfollowers)

    # -- pages ----------------------------------------------------------------

    def followers_page(self, user_id: int, *, limit: int = 50, cursor: str | None = None) -> Page:
        return self._page(followers_key(user_id), user_id, limit, cursor)

    def following_page(self, user_id: int, *, limit: int = 50, cursor: str | None = None) -> Page:
        return self._page(following_key(user_id), user_id, limit, cursor)

    def _page(self, key: str, owner: int, limit: int, cursor: str | None) -> Page:
        """Newest first, ties in ID order; the cursor is the last item's (score, ID).

        Members are zero-padded, so Redis's order is exactly (score, ID) descending:
        the next page starts at the cursor's score and skips what is not below it.
        One call, unless more than one item shares the cursor's score.
        """
        client = self.shards.client_for(owner)
        top: float | str = "+inf"
        after: tuple[int, int] | None = None
        if cursor is not None:
            after = cursors.decode(cursor)
            top = after[0]
        items: list[tuple[int, int]] = []
        offset, want = 0, limit + 2  # the cursor's own item comes back too
        while True:
            self.shards.count_call()
            batch = client.zrevrangebyscore(
                key, top, "-inf", start=offset, num=want, withscores=True
            )
            offset += len(batch)
            for raw, score in batch:
                entry = (int(score), int(raw))
                if after is None or entry < after:
                    items.append(entry)
            if len(items) > limit or len(batch) < want:
                break
        ids = [object_id for _, object_id in items[:limit]]
        if len(items) <= limit:
            return Page(ids, None)
        score, object_id = items[limit - 1]
        return Page(ids, cursors.encode(score, object_id))

    # -- fan-out --------------------------------------------------------------

    def board_followers(self, board: int, owner: int, *, chunk: int = 1000) -> Iterator[list[int]]:
        """Every follower of a board, ``chunk`` at a time: explicit board followers, then
        the owner's followers less the board's unfollowers. Never all in memory at once."""
        client = self.shards.client_for(owner)
        scan = 0
        while True:
            self.shards.count_call()
            scan, found = client.hscan(board_followers_key(board), scan, count=chunk)
            ids = [int(raw) for raw in found]
            for start in range(0, len(ids), chunk):  # COUNT is only a hint to Redis
                yield ids[start : start + chunk]
            if scan == 0:
                break
        start = 0
        while True:
            self.shards.count_call()
            members = client.zrange(followers_key(owner), start, start + chunk - 1)
            if not members:
                return
            self.shards.count_call()
            unfollowed = client.smismember(board_unfollowers_key(board), members)
            kept = [int(raw) for raw, gone in zip(members, unfollowed, strict=True) if not gone]
            if kept:
                yield kept
            start += chunk
