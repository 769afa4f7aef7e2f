"""The social model's Redis keys as a move of virtual shards needs to know them: which keys
a virtual shard holds, and how moved keys are repaired from MySQL after the switch
(``shardstore.control.redis_move``).

A pinner's graph keys (``u:<id>:...``), feed keys (``homefeed:<id>``, ``seen:<id>``) and
notifications (``notifications:<id>``, ``notifications-read:<id>``) go by
``vshard_of(id)``; a board's (``b:<board>:...``) live with its owner's, found in the board
object. The repair rewrites the moved pinners' graph keys from MySQL (writes that reached
the old instance between the copy and the switch; the graph's truth is MySQL). A fan-out
entry pushed to the old instance in that window is not carried over: feeds are
rebuildable and the next pin arrives as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from shardstore.control import redis_move
from shardstore.interface import StoreInterface
from shardstore.redis_shards import RedisShards, vshard_of

from .graph import FollowerGraph
from .graph_sync import sync_graph

USER_PREFIXES = ("u:", "homefeed:", "seen:", "notifications:", "notifications-read:")
BOARD_PREFIX = "b:"
_BATCH = 500


def keys_of(client: Any, store: StoreInterface, moving: redis_move.Moving) -> Iterator[str]:
    """The keys on an instance that belong to moving virtual shards."""
    boards: list[tuple[str, int]] = []
    for raw in client.scan_iter(count=1000):
        key = raw.decode() if isinstance(raw, bytes) else raw
        if key.startswith(BOARD_PREFIX):
            board = key.split(":")[1]
            if board.isdigit():
                boards.append((key, int(board)))
            continue
        owner = _user_of(key)
        if owner is not None and moving(vshard_of(owner)):
            yield key
    for start in range(0, len(boards), _BATCH):
        chunk = boards[start : start + _BATCH]
        found = store.objects("board").get_many({b for _, b in chunk}, include_inactive=True)
        owner_of = {board["id"]: int(board["owner_id"]) for board in found}
        for key, board in chunk:
            if board in owner_of and moving(vshard_of(owner_of[board])):
                yield key


def _user_of(key: str) -> int | None:
    for prefix in USER_PREFIXES:
        if key.startswith(prefix):
            digits = key[len(prefix) :].split(":")[0]
            return int(digits) if digits.isascii() and digits.isdigit() else None
    return None


def repair(store: StoreInterface, shards: RedisShards, moving: redis_move.Moving) -> str:
    """The moved pinners' graph keys, rewritten from MySQL on the new map."""
    graph = FollowerGraph(shards)
    report = sync_graph(store, graph, owners=lambda owner: moving(vshard_of(owner)))
    return f"{report.keys_checked} keys checked, {report.keys_repaired} repaired"


REDIS_KEYS = redis_move.RedisKeys(
    keys_of, repair, repair_step="repair the graph keys of {where} from MySQL"
)
