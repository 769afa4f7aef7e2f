"""The long job ``comment-authors``: lists each comment in its author's
``user_has_comments``, for comments written before that list was kept (a deleted
account's purge finds its comments there). Run it once after upgrading:
``manage.py shardstore job start comment-authors``. A second run adds nothing."""

from __future__ import annotations

from shardstore.jobs import Chunk, JobContext, JobKind, Params, Summary, register


def _list_authors(context: JobContext, chunk: Chunk, params: Params) -> Summary:
    authored = context.store.mapping("user_has_comments")
    checked = added = 0
    for shard in chunk.shards:
        for comments in context.store.objects("comment").scan(shard):
            for comment in comments:
                checked += 1
                if not authored.contains(comment["author_id"], comment["id"]):
                    authored.add(comment["author_id"], comment["id"])
                    added += 1
    return {"checked": checked, "added": added}


register(
    JobKind(
        "comment-authors",
        "List each comment in its author's comments (for comments from before that list)",
        _list_authors,
    )
)
