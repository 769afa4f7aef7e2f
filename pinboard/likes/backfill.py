"""The long job ``secret-likes``: lists the likes of every secret board's pins in their
likers' ``user_likes_secret_pins``, for likes from before that list was kept (the count of a
pinner's likes others see leaves those out). Run it once after upgrading, once
``shardstore init`` has added the table: ``manage.py shardstore job start secret-likes``.
A second run adds nothing."""

from __future__ import annotations

from shardstore.jobs import Chunk, JobContext, JobKind, Params, Summary, register
from shardstore.mappings import pages_of
from social.rules import is_secret

from .actions import BATCH, follow_board


def _list_secret_likes(context: JobContext, chunk: Chunk, params: Params) -> Summary:
    boards = pins = added = 0
    for shard in chunk.shards:  # a board's pins live on its shard, their likes anywhere
        for found in context.store.objects("board").scan(shard):
            for board in found:
                if not is_secret(board):
                    continue
                boards += 1
                listed = context.store.mapping("board_has_pins")
                for pin_ids in pages_of(listed, board["id"], batch=BATCH):
                    pins += len(pin_ids)
                    added += sum(follow_board(pin_id, secret=True) for pin_id in pin_ids)
    return {"secret_boards": boards, "pins": pins, "added": added}


register(
    JobKind(
        "secret-likes",
        "List the likes of secret boards' pins apart (for likes from before that list)",
        _list_secret_likes,
    )
)
