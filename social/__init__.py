"""social: the site's social model on Redis, on top of ``shardstore``.

The follower graph (graph.py), home feeds (feeds.py) and notifications
(notifications.py), each kept in Redis beside the MySQL mapping tables that are
their truth; the syncs that rebuild them from MySQL (graph_sync.py, feed_sync.py);
the long-job kinds that run those syncs shard by shard (jobs.py); what a move
of Redis virtual shards needs to know of their keys (redis_keys.py); and who may see a
board and where a pin goes (rules.py), which the site's pages and fan-out follow too.

This package owns the names those rules depend on: the mapping tables it reads
(``user_follows_users``, ``board_has_pins``...), the objects' fields (``owner_id``,
``secret``, ``saved_from``) and the Redis key prefixes. No Django here: the site
(``pinboard``) imports it, and it imports only ``shardstore``, never the site.
"""
