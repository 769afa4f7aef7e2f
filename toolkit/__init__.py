"""The test, bench, drill and local-cluster toolkit: what starts real servers and the site's
own processes for the test suite, the benchmarks, the fault drills and ``make cluster``.

Not part of the library (``shardstore``) or of the site (``pinboard``): nothing there
imports it. ``processes`` starts and stops one process by its own PID; ``servers`` starts
one data server on it (MariaDB, Redis, memcached, ZooKeeper) and ``site_processes`` one of
the site's (gunicorn, runserver, a Celery worker); ``cluster`` puts them together into the
local cluster, ``load`` drives the site through its API and ``drills`` break the cluster
under that load. ``images`` draws the pictures tests and benchmarks upload.
"""
