"""The kinds of long job this site runs, and what their chunks run against."""

from __future__ import annotations

from django.conf import settings

from shardstore import jobs as kinds_of_jobs
from shardstore.backups.store import backup_store
from shardstore.control.mysql_hosts import admin
from shardstore.jobs import JobContext, JobKind

from ..data_plane import cached_store, get_graph


def kinds() -> dict[str, JobKind]:
    """Every kind of job: the library's, and those of ``settings.JOB_KIND_MODULES``."""
    kinds_of_jobs.load(settings.JOB_KIND_MODULES)
    return kinds_of_jobs.kinds()


def kind(name: str) -> JobKind:
    kinds()
    return kinds_of_jobs.kind(name)


def context() -> JobContext:
    """What chunks run against: this process's store (with its caches) and Redis."""
    return JobContext(
        cached_store(),
        lambda: get_graph().shards,
        mysql=admin(
            settings.SHARDSTORE.get("MYSQL_ADMIN"), settings.SHARDSTORE.get("MYSQL_REPLICATION")
        ),
        backups=backup_store(settings.SHARDSTORE.get("BACKUP_STORE")),
    )
