"""The local cluster: the production shape on one machine, on loopback, up with one command.

    python -m toolkit.cluster up [--dir var/cluster]   # make cluster
    python -m toolkit.cluster status                   # make cluster-status
    python -m toolkit.cluster down                     # make cluster-stop

What runs, each on a loopback port chosen free at the first ``up`` and kept after it
(``plan``):

* ZooKeeper, holding the config documents (``shards``, ``redis``, ``caches``) under
  ``/pinboard``;
* six MariaDB servers: ``db1a``, master of shards 0-2047, replicated to ``db1b`` and
  ``db1c``, and ``db2a``, master of 2048-4095, replicated to ``db2b`` and ``db2c`` (GTID,
  semi-synchronous: either replica's acknowledgement releases a commit; every
  server starts read-only and only the masters the shard map names are made writable:
  ``mysql``);
* Redis for the follower graph and home feeds, with a replica; a second Redis as the
  Celery broker, so a drill that kills and wipes the first leaves the queue alone;
* two memcached servers, each cache pool on both;
* a Celery worker (two processes) and the site under gunicorn (two workers, four threads).

Everything lives in the cluster's directory: a directory per server (its data), ``logs/``,
``site/`` (the site's ``PINBOARD_VAR_DIR``: control database, config mirror, media),
``secrets.json`` (passwords made at the first ``up``, mode 0600), ``env`` (``export
NAME=value`` lines: all a process needs to use the cluster; ``source`` it) and
``cluster.json`` (each process's PID and start time, port, data, log and address).

``up`` is idempotent (``bring_up``): what runs is left alone, a process that died is
started again on its port with its data, and each setup step is done once. ``down``
signals exactly the processes ``cluster.json`` names, each only while its PID still
belongs to the process that was started (same start time, same program on its command
line); never by name. ``up`` returns once every replica's I/O and SQL threads run, and
``status`` shows each replica's source, threads, lag and last error (``replication``).
``commands`` holds the three commands; ``state`` the cluster as its directory records it.

Drills use the same objects::

    cluster = Cluster.load(Path("var/cluster"))   # toolkit.cluster.state
    cluster["db1a"].halt(kill=True)   # a crash
    cluster["db1a"].restart()         # same port, same data; read-only until made master
    env = cluster.env()               # the environment of a process using the cluster
"""
