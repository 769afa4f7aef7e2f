"""Real server processes for the tests, the benchmarks, the drills and the local cluster.

One module per server, each with one class that starts one real server process:
``mariadb.MariaDBServer``, ``redis.RedisServer``, ``memcached.MemcachedServer``,
``zookeeper.ZooKeeperServer``; ``base.Server`` is their shared life cycle, on
toolkit/processes.py's ``Launched``. The site's own processes (gunicorn, a Celery
worker) are in toolkit/site_processes.py. By default a server belongs to the test run
alone:

* it listens on 127.0.0.1 only, on a free port picked at start;
* it keeps all of its data in a fresh temporary directory (under /dev/shm when
  the machine has it, so nothing touches a disk), removed again by ``stop()``;
* it is sent SIGTERM if the process that started it dies, so even a killed
  test run leaves no server behind;
* ``start()`` returns only once the server answers a real request, or raises
  ``ServerStartError`` with the tail of the server's own log;
* ``stop()`` signals the process by its own PID (never by name), so servers
  that other people or the system run on the default ports are left alone.

All classes have the same shape::

    if not RedisServer.available():
        print(RedisServer.available().reason)
    server = RedisServer().start()
    try:
        ...  # connect to server.host, server.port
    finally:
        server.stop()

or, equivalently, ``with RedisServer() as server: ...``.  ``extra_args`` lets a
caller add options (for example binary logging for replication tests).

The local cluster (toolkit/cluster/) runs the same classes for longer lives:
``home=DIR`` keeps the data there across stops and starts (prepared once, never
deleted), ``port=N`` reuses the port chosen at the first start, and
``detached=True`` puts the server in a session of its own, with no parent-death
signal, so it outlives the command that started it; a later command finds it again
with ``adopt(pid, started)`` (toolkit/processes.py). ``halt(kill=True)`` and
``restart()`` work the same for both lives: a drill kills a master with SIGKILL and
brings it back on the same port and data.
"""
