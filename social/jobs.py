"""The social model's long-job kinds, registered with ``shardstore.jobs`` on import: the
follower graph and the home feeds rebuilt from MySQL, shard by shard.

A site that runs long jobs lists this module among the modules whose kinds it loads
(``shardstore.jobs.load``); a chunk finds the site's Redis in its context
(``JobContext.redis``).
"""

from __future__ import annotations

from shardstore.jobs import Chunk, JobContext, JobKind, Params, Summary, register

from .feed_sync import sync_feeds
from .feeds import HomeFeeds
from .graph import FollowerGraph
from .graph_sync import sync_graph

CHECK = "true: report only, change nothing"


def _graph_chunk(context: JobContext, chunk: Chunk, params: Params) -> Summary:
    """The follower-graph keys of the chunk's pinners and boards, from MySQL
    (social/graph_sync.py): rewritten where they differ, deleted where unexplained."""
    report = sync_graph(
        context.store,
        FollowerGraph(context.redis),
        repair=not params.get("check"),
        shards=chunk.shards,
    )
    return {
        "keys_checked": report.keys_checked,
        "keys_repaired": report.keys_repaired,
        "keys_removed": report.keys_removed,
    }


def _feed_chunk(context: JobContext, chunk: Chunk, params: Params) -> Summary:
    """The home feeds of the chunk's pinners, from MySQL (social/feed_sync.py): active
    pinners' feeds rewritten where they differ, or with ``everyone`` every pinner's."""
    report = sync_feeds(
        context.store,
        HomeFeeds(context.redis),
        repair=not params.get("check"),
        everyone=bool(params.get("everyone")),
        shards=chunk.shards,
    )
    return {
        "feeds_checked": report.feeds_checked,
        "feeds_repaired": report.feeds_repaired,
        "feeds_missed": report.feeds_missed,
    }


register(
    JobKind(
        "graph-rebuild",
        "Rewrite the Redis follower graph of each shard's pinners from the MySQL mapping tables",
        _graph_chunk,
        params={"check": CHECK},
    )
)
register(
    JobKind(
        "feed-rebuild",
        "Rewrite the home feeds of each shard's pinners from the MySQL mapping tables",
        _feed_chunk,
        params={
            "check": CHECK,
            "everyone": "true: every pinner's feed, each counted active (after Redis lost its"
            " data); else active pinners' feeds only",
        },
    )
)
