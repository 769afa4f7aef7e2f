"""A steady, bounded write and read load on the site, through its own HTTP API, that records
every write the site acknowledged, so that a drill can prove none of them was lost.

The drills (toolkit/drills/) break something under this load (a failover, a killed
server) and then ask two questions: was any acknowledged write lost, and how long
could the shards of each master not take a write? So:

* **Pinners** (``pinners.ensure_pinners``) are real accounts made through the API (sign-up,
  log-in for a token, a board, one pin), kept in a file so that later runs reuse them
  (sign-up and log-in are rate-limited). They land on random open shards. The load
  puts them in groups: by default the master of their shard in the map in force at the
  start (a split drill also tells the shards that move from those that stay), and
  wants a few in every group.
* **Writers** (a few threads per group; ``traffic.Load``) each post comments on their
  pinners' own pins (``POST /api/v1/pins/{id}/comments``): the comment, its listing and
  the token check all live on the pinner's shard, so a write touches one master only,
  and a 201 carries the new comment's ID. Each 2xx is an ``Ack`` (ID, shard, group,
  time). A 503 (with ``Retry-After``) or a connection error is *refused*: nothing was
  written, and the writer tries again after ``Retry-After``. Anything else is *failed*.
* **Readers** read comment pages and profiles of the same pinners, counted the same way.
* The load stops itself after ``max_seconds``, or when ``stop()`` is called.
* ``verify(store)`` reads every acknowledged comment back from MySQL (a ``Store`` on the
  shard map in force, no cache in between) and checks it is listed under its pin; any
  missing is *lost*. ``report()`` gives, per group, what was acknowledged, refused and
  failed, and the longest stretch with no acknowledged write on its shards: the
  unavailability window of those shards (``report``).

All of it goes through ``api.Site``, the site's API over HTTP. Every loop is bounded: by
the load's deadline, by a retry cap, or by a count.
"""
