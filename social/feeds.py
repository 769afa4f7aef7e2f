"""Home feeds: a capped Redis list per pinner, ``homefeed:<user_id>``, newest first.

Each entry is ``<pin_id>:<sequence>:<board_id>`` (the sequence is the pin's time in
microseconds), so feeds can be merged in order when a pinner follows someone, and a page
can read its pins' boards (a secret board's pins are left out) with the pins, not after
them (an entry is some 18 bytes longer for it). The board is the one the pin was on when
the entry was written: a reader checks it against the board the pin is on now. An entry
without it (``<pin_id>:<sequence>``, as feeds were written before) reads as one whose
board is not known.

A fan-out batch pushes one pin to about a thousand followers in one call per
Redis instance: a Lua script that claims the batch (so a retried batch costs
nothing), then LPUSH and LTRIM for each follower who has visited lately
(``seen:<user_id>`` exists). Pinners away longer are skipped; their feed is
rebuilt when they come back.

A pin is in a feed at most once, whatever the batching: a pin's entry has the
same pin and sequence every time (its sequence is the pin's own), and the feed is
kept ordered, so the script meets the pin's entry exactly where it would put the
new one. A pin newer than the head cannot be in the feed yet; one that is not
looks through the newest ``LATE_WINDOW`` entries, which it scans anyway.

The site's newest pins, what a visitor without an account sees, are one more list:
a sorted set ``recent`` of pin IDs scored by sequence, capped like a feed, so a
late or repeated add lands in order and only once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import redis

from shardstore import cursors
from shardstore.interface import Page
from shardstore.redis_shards import RedisShards

FEED_LENGTH = 1000
RECENT_KEY = "recent"
#: A pinner who has not visited for this long gets no fan-out; their feed is rebuilt.
ACTIVE_SECONDS = 14 * 24 * 3600
#: How long a fan-out batch's claim is kept (longer than any retry schedule).
CLAIM_SECONDS = 24 * 3600

# KEYS: claim, then (seen, feed) per follower. ARGV: entry, feed length, claim ttl.
# Entries stay ordered by (sequence, pin id), newest first: a pin newer than the
# head (the usual case) is pushed on; one that arrives late (a slow batch, a
# retry) is inserted where it belongs within the newest WINDOW entries.
_PUSH = """
local function parse(e)  -- pin id (as digits: it exceeds a double) and sequence
  local pin, sequence = string.match(e, '^(%d+):(%d+)')
  return pin, tonumber(sequence)
end
local entry, length, window = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[4])
local pin, sequence = parse(entry)
local function same(other)  -- the same pin at the same place, whatever board it names
  local other_pin, other_sequence = parse(other)
  return other_pin == pin and other_sequence == sequence
end
local function before(other)  -- whether the new entry sorts before another, newest first
  local other_pin, other_sequence = parse(other)
  if sequence ~= other_sequence then return sequence > other_sequence end
  if #pin ~= #other_pin then return #pin > #other_pin end
  return pin > other_pin
end
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[3]) then return -1 end
local pushed = 0
for i = 2, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local feed = KEYS[i + 1]
    local head = redis.call('LINDEX', feed, 0)
    local placed = not head or before(head)
    if placed then
      redis.call('LPUSH', feed, entry)
    else
      local present = false
      for _, current in ipairs(redis.call('LRANGE', feed, 0, window - 1)) do
        if same(current) then  -- already there (another batch, another fan-out)
          present = true
          break
        end
        if before(current) then
          redis.call('LINSERT', feed, 'BEFORE', current, entry)
          placed = true
          break
        end
      end
      local size = redis.call('LLEN', feed)
      if not placed and not present and size <= window and size < length then
        redis.call('RPUSH', feed, entry)  -- older than all: the tail
        placed = true
      end
    end
    if placed then
      redis.call('LTRIM', feed, 0, length - 1)
      pushed = pushed + 1
    end
  end
end
return pushed
"""
#: How far into a feed a late pin is placed; older than that, it is dropped.
LATE_WINDOW = 200


Entry = tuple[int, int]  # (sequence, pin id), as a feed orders them
Boards = Mapping[int, int]  # pin ID -> the ID of the board it was on, where known


class FeedPage(NamedTuple):
    """A page of a home feed: pin IDs, newest first, the next page's cursor, and the board
    of each pin whose entry names it."""

    ids: list[int]
    cursor: str | None
    boards: dict[int, int]


def feed_key(user_id: int) -> str:
    return f"homefeed:{user_id}"


def seen_key(user_id: int) -> str:
    return f"seen:{user_id}"


def entry(pin_id: int, sequence: int, board_id: int = 0) -> str:
    return f"{pin_id}:{sequence}:{board_id}" if board_id else f"{pin_id}:{sequence}"


def newest(entries: Iterable[Entry], length: int) -> list[Entry]:
    """One entry per pin (its highest sequence), newest first, ``length`` at most."""
    highest: dict[int, int] = {}
    for sequence, pin_id in entries:
        if sequence > highest.get(pin_id, -1):
            highest[pin_id] = sequence
    return sorted(((s, p) for p, s in highest.items()), reverse=True)[:length]


def parse_entry(raw: bytes | str) -> tuple[int, int]:
    """(sequence, pin_id) of a feed entry."""
    return parse_full(raw)[:2]


def parse_full(raw: bytes | str) -> tuple[int, int, int]:
    """(sequence, pin_id, board_id) of a feed entry; board 0: not known."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    pin_id, _, rest = text.partition(":")
    sequence, _, board_id = rest.partition(":")
    return int(sequence or 0), int(pin_id), int(board_id or 0)


def read_entries(raw: Iterable[bytes | str]) -> tuple[list[Entry], dict[int, int]]:
    """A feed's entries, and the board of each pin whose entry names it."""
    entries, boards = [], {}
    for sequence, pin_id, board_id in map(parse_full, raw):
        entries.append((sequence, pin_id))
        if board_id:
            boards[pin_id] = board_id
    return entries, boards


class HomeFeeds:
    def __init__(self, shards: RedisShards, *, length: int = FEED_LENGTH) -> None:
        self.shards = shards
        self.length = length
        self._scripts = {name: c.register_script(_PUSH) for name, c in shards.clients().items()}

    # -- fan-out --------------------------------------------------------------

    def push(
        self,
        pin_id: int,
        sequence: int,
        user_ids: Iterable[int],
        *,
        batch: str,
        board_id: int = 0,
    ) -> int:
        """Push a pin (of ``board_id``) to these pinners' feeds (the active ones); once per
        ``batch`` name.

        One script call per Redis instance. Returns how many feeds got the pin.
        """
        pushed = 0
        for instance, users in self.shards.group(user_ids).items():
            keys = [f"fanout:{pin_id}:{batch}:{instance}"]
            for user_id in users:
                keys += [seen_key(user_id), feed_key(user_id)]
            self.shards.count_call()
            result = self._scripts[instance](
                keys=keys,
                args=[entry(pin_id, sequence, board_id), self.length, CLAIM_SECONDS, LATE_WINDOW],
            )
            pushed += max(0, int(result))
        return pushed

    # -- reads ----------------------------------------------------------------

    def page(self, user_id: int, *, limit: int = 50, cursor: str | None = None) -> FeedPage:
        """Pin IDs newest first, with the boards their entries name. The cursor is the last
        entry's (sequence, pin id), so pins pushed meanwhile neither repeat nor hide
        entries on later pages."""
        client = self.shards.client_for(user_id)
        self.shards.count_call()
        if cursor is None:
            entries, boards = read_entries(client.lrange(feed_key(user_id), 0, limit))
        else:
            after = cursors.decode(cursor)
            # at most FEED_LENGTH short entries
            entries, boards = read_entries(client.lrange(feed_key(user_id), 0, -1))
            entries = [e for e in entries if e < after]
        page = _paged(entries, limit)
        return FeedPage(page.ids, page.cursor, {p: boards[p] for p in page.ids if p in boards})

    def entries(self, user_id: int) -> list[tuple[int, int]]:
        """The whole feed as (sequence, pin_id), newest first."""
        self.shards.count_call()
        return [
            parse_entry(r) for r in self.shards.client_for(user_id).lrange(feed_key(user_id), 0, -1)
        ]

    # -- visits ---------------------------------------------------------------

    def mark_seen(self, user_id: int) -> bool:
        """Note a visit; returns False if the pinner had been away (their feed is stale)."""
        self.shards.count_call()
        was_there = self.shards.client_for(user_id).set(
            seen_key(user_id), 1, ex=ACTIVE_SECONDS, get=True
        )
        return was_there is not None

    # -- whole-feed edits -----------------------------------------------------

    def merge(
        self, user_id: int, pins: Iterable[tuple[int, int]], boards: Boards | None = None
    ) -> None:
        """Merge (sequence, pin_id) pairs into the feed in order, keeping it capped;
        ``boards``: their pins' boards, where known."""
        self.rewrite(user_id, lambda current: current + list(pins), boards=boards)

    def remove_pins(self, user_id: int, pin_ids: set[int]) -> None:
        """Drop these pins from the feed (after an unfollow)."""
        self.rewrite(user_id, lambda current: [e for e in current if e[1] not in pin_ids])

    def replace(
        self, user_id: int, pins: Iterable[tuple[int, int]], boards: Boards | None = None
    ) -> None:
        """Set the whole feed (a rebuild); ``boards``: its pins' boards, where known."""
        self.rewrite(user_id, lambda current: list(pins), boards=boards)

    def rewrite(
        self,
        user_id: int,
        change: Callable[[list[Entry]], Iterable[Entry]],
        *,
        attempts: int | None = None,
        boards: Boards | None = None,
    ) -> bool:
        """Set the feed to ``change(current)``, one entry per pin, newest first, capped,
        each naming its pin's board as ``boards`` has it, else as the feed did. Under
        WATCH, so a fan-out push that lands meanwhile is not lost: the change is made again
        on what the feed holds then. False if the feed kept changing through ``attempts``
        tries (None: try until it holds)."""
        client = self.shards.client_for(user_id)
        key = feed_key(user_id)
        with client.pipeline(transaction=True) as pipe:
            for _attempt in itertools.count() if attempts is None else range(attempts):
                try:
                    pipe.watch(key)
                    current, known = read_entries(pipe.lrange(key, 0, -1))
                    ordered = newest(change(current), self.length)
                    known.update(boards or {})  # after the change, which may add to them
                    pipe.multi()
                    pipe.delete(key)
                    if ordered:
                        pipe.rpush(key, *(entry(p, s, known.get(p, 0)) for s, p in ordered))
                    pipe.execute()
                    return True
                except redis.WatchError:
                    continue  # written meanwhile: made again on what it holds now
                finally:
                    self.shards.count_call(2)  # the read, and the transaction
        return False

    # -- the site's newest pins -------------------------------------------------

    def add_recent(self, pin_id: int, sequence: int) -> None:
        """Put a new pin among the site's newest (once, whenever it comes)."""
        with self._recent_client().pipeline(transaction=True) as pipe:
            pipe.zadd(RECENT_KEY, {str(pin_id): sequence})
            pipe.zremrangebyrank(RECENT_KEY, 0, -self.length - 1)  # keep the newest
            pipe.execute()
        self.shards.count_call()

    def replace_recent(self, pins: Iterable[tuple[int, int]]) -> None:
        """Set the whole of the site's newest pins: (sequence, pin_id) pairs."""
        kept = sorted(pins, reverse=True)[: self.length]
        with self._recent_client().pipeline(transaction=True) as pipe:
            pipe.delete(RECENT_KEY)
            if kept:
                pipe.zadd(RECENT_KEY, {str(pin_id): sequence for sequence, pin_id in kept})
            pipe.execute()
        self.shards.count_call()

    def remove_recent(self, pin_ids: Iterable[int]) -> None:
        members = [str(p) for p in pin_ids]
        if members:
            self.shards.count_call()
            self._recent_client().zrem(RECENT_KEY, *members)

    def recent_page(self, *, limit: int = 50, cursor: str | None = None) -> Page:
        """The site's newest pin IDs, newest first, paged like a feed."""
        client = self._recent_client()
        self.shards.count_call()
        if cursor is None:
            raw = client.zrevrange(RECENT_KEY, 0, limit, withscores=True)
        else:
            after = cursors.decode(cursor)
            raw = client.zrevrangebyscore(RECENT_KEY, after[0], "-inf", withscores=True)
        entries = sorted(((int(score), int(pin)) for pin, score in raw), reverse=True)
        if cursor is not None:
            entries = [e for e in entries if e < after]
        return _paged(entries, limit)

    def _recent_client(self) -> Any:
        return self.shards.client_for(0)  # one set for the whole site


def _paged(entries: list[tuple[int, int]], limit: int) -> Page:
    """The first ``limit`` of (sequence, pin_id) entries, newest first, as a Page whose
    cursor is the last one's position."""
    ids = [pin_id for _, pin_id in entries[:limit]]
    if len(entries) <= limit:
        return Page(ids, None)
    sequence, pin_id = entries[limit - 1]
    return Page(ids, cursors.encode(sequence, pin_id))
