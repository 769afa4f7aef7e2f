"""Notifications: a capped Redis sorted set per pinner, ``notifications:<user_id>``, and the
time up to which they have read it, ``notifications-read:<user_id>``.

An entry says who did what to which object, by IDs only: its member is
``<kind>:<actor id>:<object id>`` and its score the event's sequence (its time in
microseconds, exact in a double until the year 2255). Whoever reads the list looks the
IDs up as they are now, so a renamed actor shows their new name and a deleted object
can be left out. The kinds are the site's; this module only keeps them apart.

One member per (kind, actor, object): the same event delivered twice (tasks run at least
once) is the same member with the same score, and ``ZADD GT`` leaves it be; the same
kind of event again (a like after an unlike) moves the entry up to its new time, never
back down, so a late delivery of the older one changes nothing. The newest ``LENGTH``
are kept.

The unread count is the number of entries newer than the read mark: one script call,
so a page's header can show it for one Redis round trip. The mark only moves forward.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import redis

from shardstore import cursors
from shardstore.exceptions import InvalidCursor
from shardstore.redis_shards import RedisShards

#: How many notifications a pinner keeps, newest first.
LENGTH = 500
#: Rewrites of one list tried while deliveries keep changing it.
WRITE_ATTEMPTS = 10

# KEYS: list, mark. Entries newer than the mark (all of them without a mark).
_UNREAD = """
local mark = redis.call('GET', KEYS[2])
if not mark then return redis.call('ZCARD', KEYS[1]) end
return redis.call('ZCOUNT', KEYS[1], '(' .. mark, '+inf')
"""
# KEYS: list, mark. ARGV: the sequence read up to, or '' for the newest entry. The mark
# only moves forward. Returns the mark in force.
_MARK = """
local up_to = ARGV[1]
if up_to == '' then
  local head = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #head == 0 then return redis.call('GET', KEYS[2]) or '0' end
  up_to = string.format('%d', tonumber(head[2]))
end
local current = redis.call('GET', KEYS[2])
if current and tonumber(current) >= tonumber(up_to) then return current end
redis.call('SET', KEYS[2], up_to)
return up_to
"""


def list_key(user_id: int) -> str:
    return f"notifications:{user_id}"


def mark_key(user_id: int) -> str:
    return f"notifications-read:{user_id}"


@dataclass(frozen=True)
class Entry:
    """One notification: ``actor_id`` did ``kind`` to ``object_id`` at ``sequence``."""

    sequence: int
    kind: str
    actor_id: int
    object_id: int

    def __post_init__(self) -> None:
        if not self.kind or ":" in self.kind:
            raise ValueError(f"a notification kind is a word without ':', not {self.kind!r}")

    @property
    def member(self) -> str:
        return f"{self.kind}:{self.actor_id}:{self.object_id}"

    @classmethod
    def parse(cls, member: bytes | str, score: float) -> Entry:
        text = member.decode() if isinstance(member, bytes) else member
        kind, actor, target = text.split(":")
        return cls(int(score), kind, int(actor), int(target))


def newest_first(entries: Iterable[Entry]) -> list[Entry]:
    """Entries in a list's order: by time, then (one microsecond) by member, as Redis
    orders a sorted set's equal scores."""
    return sorted(entries, key=lambda e: (e.sequence, e.member.encode()), reverse=True)


@dataclass(frozen=True)
class EntryPage:
    entries: list[Entry]  # newest first
    cursor: str | None  # of the next page; None on the last
    read_up_to: int  # the pinner's read mark (0: nothing read yet)


class Notifications:
    def __init__(self, shards: RedisShards, *, length: int = LENGTH) -> None:
        self.shards = shards
        self.length = length
        self._unread = {
            name: shards.register_read_script(name, _UNREAD) for name in shards.clients()
        }
        self._mark = {name: c.register_script(_MARK) for name, c in shards.clients().items()}

    # -- delivery -------------------------------------------------------------

    def add(self, user_id: int, entry: Entry) -> None:
        """Put an entry in the pinner's list (again: nothing changes), keeping it capped."""
        with self.shards.client_for(user_id).pipeline(transaction=True) as pipe:
            pipe.zadd(list_key(user_id), {entry.member: entry.sequence}, gt=True)
            pipe.zremrangebyrank(list_key(user_id), 0, -self.length - 1)  # keep the newest
            pipe.execute()
        self.shards.count_call()

    def forget(self, user_id: int, object_ids: Iterable[int]) -> int:
        """Drop the entries naming these objects (deleted); returns how many went."""
        doomed = {int(i) for i in object_ids}
        members = [e.member for e in self.entries(user_id) if e.object_id in doomed]
        if members:
            self.shards.count_call()
            self.shards.client_for(user_id).zrem(list_key(user_id), *members)
        return len(members)

    def clear(self, user_id: int) -> None:
        """Drop the pinner's list and read mark (their account is gone)."""
        self.shards.count_call()
        self.shards.client_for(user_id).delete(list_key(user_id), mark_key(user_id))

    def replace(self, user_id: int, compute: Callable[[], list[Entry]]) -> bool:
        """Set the whole list to what ``compute`` returns (a rebuild), under WATCH: a
        delivery that lands meanwhile makes it compute again, since its write to MySQL
        may have come after ``compute`` read. False if deliveries kept coming."""
        key = list_key(user_id)
        with self.shards.client_for(user_id).pipeline(transaction=True) as pipe:
            for _attempt in range(WRITE_ATTEMPTS):
                try:
                    pipe.watch(key)
                    newest = newest_first(compute())[: self.length]
                    pipe.multi()
                    pipe.delete(key)
                    if newest:
                        pipe.zadd(key, {e.member: e.sequence for e in newest})
                    pipe.execute()
                    self.shards.count_call(2)
                    return True
                except redis.WatchError:
                    self.shards.count_call(2)
        return False

    # -- reads ----------------------------------------------------------------

    def entries(self, user_id: int) -> list[Entry]:
        """The whole list, newest first."""
        self.shards.count_call()
        raw = self.shards.client_for(user_id).zrevrange(list_key(user_id), 0, -1, withscores=True)
        return [Entry.parse(member, score) for member, score in raw]

    def page(self, user_id: int, *, limit: int = 50, cursor: str | None = None) -> EntryPage:
        """A page of entries, newest first, with the read mark: one round trip.

        The cursor is the last entry's sequence and how many entries of that sequence
        were shown so far (several events can share a microsecond), so entries added
        meanwhile neither repeat nor hide older ones on later pages.
        """
        key = list_key(user_id)
        with self.shards.client_for(user_id).pipeline(transaction=False) as pipe:
            if cursor is None:
                after, skip = None, 0
                pipe.zrevrange(key, 0, limit, withscores=True)
            else:
                after, skip = cursors.decode(cursor)
                if skip > self.length:
                    raise InvalidCursor(f"cursor {cursor!r} is out of range")
                pipe.zrevrangebyscore(
                    key, after, "-inf", start=skip, num=limit + 1, withscores=True
                )
            pipe.get(mark_key(user_id))
            raw, mark = pipe.execute()
        self.shards.count_call()
        entries = [Entry.parse(member, score) for member, score in raw]
        shown = entries[:limit]
        next_cursor = None
        if len(entries) > limit:
            last = shown[-1].sequence
            same = sum(1 for e in shown if e.sequence == last)
            next_cursor = cursors.encode(last, same + (skip if last == after else 0))
        return EntryPage(shown, next_cursor, int(mark or 0))

    def unread(self, user_id: int) -> int:
        """How many entries are newer than the read mark (at most ``length``)."""
        self.shards.count_call()
        script = self._unread[self.shards.instance_for(user_id)]
        return int(script(keys=[list_key(user_id), mark_key(user_id)]))

    # -- marking read ---------------------------------------------------------

    def mark_read(self, user_id: int, up_to: int | None = None) -> int:
        """Mark read the entries up to ``up_to`` (default: the newest there is now);
        returns the mark in force, which never moves back."""
        self.shards.count_call()
        script = self._mark[self.shards.instance_for(user_id)]
        keys = [list_key(user_id), mark_key(user_id)]
        return int(script(keys=keys, args=["" if up_to is None else int(up_to)]))
