"""The test, bench, drill and local-cluster toolkit: what starts real servers and the site's
own processes for the test suite, the benchmarks, the fault drills and ``make cluster``.

Not part of the library (``shardstore``) or of the site (``pinboard``): nothing there
imports it. ``servers`` starts one server process (MariaDB, Redis, memcached, ZooKeeper,
gunicorn, a Celery worker); ``cluster`` puts them together into the local cluster.
"""
