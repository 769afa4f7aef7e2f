"""gunicorn's settings for the site, in production (behind nginx) and in the local cluster alike.

Run as ``gunicorn -c gunicorn.conf.py pinboard.wsgi``. What differs between hosts comes from
the environment, so one file serves every size of machine:

- ``PINBOARD_GUNICORN_BIND``: where to listen (default ``127.0.0.1:8000``, nginx's upstream);
- ``PINBOARD_GUNICORN_WORKERS``: processes (default 2 * cores + 1);
- ``PINBOARD_GUNICORN_THREADS``: threads per process (default 4);
- ``PINBOARD_GUNICORN_FORWARDED_ALLOW_IPS``: the front ends whose X-Forwarded-* headers
  are believed (default ``127.0.0.1``: the nginx on the same host);
- ``PINBOARD_GUNICORN_ACCESS_LOG``: where the access log goes (default ``-``, standard
  output, which systemd's journal keeps; empty: none, e.g. under a load test).
"""

import multiprocessing
import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{name} must be a positive whole number, not {value!r}")
    return int(value)


bind = os.environ.get("PINBOARD_GUNICORN_BIND") or "127.0.0.1:8000"
# Threads: a request spends most of its time waiting on MySQL, memcached and Redis.
worker_class = "gthread"
workers = _int("PINBOARD_GUNICORN_WORKERS", 2 * multiprocessing.cpu_count() + 1)
threads = _int("PINBOARD_GUNICORN_THREADS", 4)

# A request that takes 30 s is stuck (a page makes a few dozen round trips); a worker
# being stopped gets as long to finish what it holds.
timeout = 30
graceful_timeout = 30
# Shorter than nginx's upstream keepalive_timeout would make no sense; nginx is the only
# client, and it reuses connections.
keepalive = 5
# Recycle workers now and then (a slow leak stays slow); the jitter keeps them from all
# restarting at the same moment.
max_requests = 10_000
max_requests_jitter = 1_000

forwarded_allow_ips = os.environ.get("PINBOARD_GUNICORN_FORWARDED_ALLOW_IPS") or "127.0.0.1"
# Requests arrive through nginx, which already refuses larger ones; these are the same
# bounds, in case something reaches gunicorn directly.
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190

accesslog = os.environ.get("PINBOARD_GUNICORN_ACCESS_LOG", "-") or None
# Client address as nginx saw it (X-Real-IP), the request, status, size, time in microseconds.
access_log_format = '%({x-real-ip}i)s %(h)s "%(r)s" %(s)s %(B)s %(D)s "%(f)s" "%(a)s"'

# Prometheus: with PINBOARD_METRICS_BIND (host:port) the master serves every worker's
# metrics there (pinboard/metrics.py), summed from the files the workers write under
# PROMETHEUS_MULTIPROC_DIR; on the web hosts only the monitoring host may reach it.
_metrics_bind = os.environ.get("PINBOARD_METRICS_BIND") or None


def when_ready(server):  # (before the first worker is forked)
    if _metrics_bind:
        from pinboard import metrics

        metrics.serve_group(_metrics_bind)


def child_exit(server, worker):
    from pinboard import metrics

    metrics.process_gone(worker.pid)
