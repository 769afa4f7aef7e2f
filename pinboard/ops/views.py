"""The console's pages (staff only): overview, a host, the ID decoder, the config documents,
cache pools, backups, Celery and the journal. Reads are in ``queries/``; actions in ``action_views``."""

from __future__ import annotations

import time

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from shardstore import Store
from shardstore.control import documents, guard
from shardstore.control.config_source import ConfigError, ConfigSource, NotPublished
from shardstore.control.pairs import MAX_LAG

from ..celery import app as celery_app
from ..data_plane import cached_store, follower_status, plane
from ..errors import BadRequest
from .access import staff_required
from .chart import bar_chart
from .paging import page_of
from .queries import backups, caches, config, decode, hosts, journal, shards, trends, workers

HISTORY_PER_PAGE = 20
MAX_ENTRY_DIGITS = 18  # the journal's ids fit a signed 64-bit integer


def raw_store() -> Store:
    """The shard store of the plane in force, under its caches (the console reads the truth)."""
    return cached_store().store


@staff_required
@require_safe
def overview(request: HttpRequest) -> HttpResponse:
    store = raw_store()
    rows = hosts.host_rows(store)
    status = follower_status()
    if status is not None and not status.connected:  # asking it again would only time out
        source: dict[str, object] = {"source_error": "unreachable from this process (see below)"}
    else:
        source = _source_versions()
    context = {
        "rows": rows,
        "pairs": hosts.pairs(store.topology, rows),
        "max_lag": MAX_LAG,
        "chart": bar_chart([(row.name, row.shards, row.users) for row in rows if row.shards]),
        "topology": store.topology,
        "user_sample": hosts.USER_SAMPLE,
        "status": status,
        "versions": plane().versions,
        "trends": trends.trends(time.time()),
        **source,
    }
    return render(request, "ops/overview.html", context)


def _source_versions() -> dict[str, object]:
    """The config source and each document's version there (or why it cannot be read)."""
    try:
        with config.config_source() as source:
            published = {name: config.current(source, name) for name in documents.NAMES}
            return {
                "source": source.description,
                "published": {n: r.version for n, r in published.items() if r is not None},
                "guard": guard.status(source),
            }
    except ConfigError as exc:
        return {"source_error": str(exc)}


@staff_required
@require_safe
def host(request: HttpRequest, host: str) -> HttpResponse:
    store = raw_store()
    if host not in store.topology.hosts:
        raise Http404(f"no host {host} in the shard map")
    page = page_of(request, shards.shards_of(store.topology, host), shards.SHARDS_PER_PAGE)
    counted = shards.shard_counts(store, list(page.object_list))
    context = {
        "row": hosts.host_row(store, host),
        "page": page,
        "counted": counted,
        "totals": shards.totals(counted),
        "object_tables": shards.OBJECT_TABLES,
    }
    return render(request, "ops/host.html", context)


@staff_required
@require_safe
def decoder(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "")
    context: dict[str, object] = {"query": query}
    status = 200
    if query:
        store = raw_store()
        try:
            object_id, how = decode.resolve(query, store)
        except decode.DecodeError as error:
            context["error"], status = error.message, error.status
        else:
            found = decode.describe(object_id, how, store)
            context["decoded"], status = found, 200 if found.found else 404
    return render(request, "ops/decode.html", context, status=status)


@staff_required
@require_safe
def topology(request: HttpRequest) -> HttpResponse:
    name = request.GET.get("document", documents.SHARDS)
    if name not in documents.NAMES:
        raise Http404(f"no config document {name[:40]!r}")
    context: dict[str, object] = {"name": name, "names": documents.NAMES}
    try:
        with config.config_source() as source:
            revision = config.current(source, name)
            revisions = config.history(source, name)
            page = page_of(request, revisions, HISTORY_PER_PAGE)
            first = page.start_index() - 1 if revisions else 0
            context |= {
                "source": source.description,
                "revision": revision,
                "pretty": config.pretty(revision) if revision else "",
                "page": page,
                "history": config.with_changes(revisions, first, first + HISTORY_PER_PAGE),
                **_compared(request, source, name),
            }
    except NotPublished as exc:  # ?a= or ?b= names a version never published
        raise Http404(str(exc)) from None
    except ConfigError as exc:
        context["source_error"] = str(exc)
    return render(request, "ops/topology.html", context)


def _compared(request: HttpRequest, source: ConfigSource, name: str) -> dict[str, object]:
    """``?a=&b=``: the diff between any two versions."""
    a, b = request.GET.get("a"), request.GET.get("b")
    if not a and not b:
        return {}
    versions = []
    for raw in (a or "", b or ""):
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 9:
            raise BadRequest("compare two version numbers")
        versions.append(int(raw))
    older, newer = (config.revision(source, name, version) for version in versions)
    return {"compared": (older, newer), "comparison": config.diff_lines(older, newer)}


@staff_required
@require_safe
def cache_pools(request: HttpRequest) -> HttpResponse:
    current = plane()
    context: dict[str, object] = {"redis": caches.redis_views(current.graph.shards)}
    try:
        with config.config_source() as source:
            servers, origin = caches.configured_servers(source)
    except ConfigError as exc:
        servers, origin = {}, f"the config source is unreachable ({exc})"
    context |= {"pools": caches.pool_views(current.store.pools, servers), "origin": origin}
    return render(request, "ops/caches.html", context)


@staff_required
@require_safe
def backup_list(request: HttpRequest) -> HttpResponse:
    context: dict[str, object] = {"store": settings.SHARDSTORE.get("BACKUP_STORE") or ""}
    try:
        with config.config_source() as source:
            context["rows"] = backups.backup_rows(source, raw_store().topology)
    except ConfigError as exc:
        context["source_error"] = str(exc)
    return render(request, "ops/backups.html", context)


@staff_required
@require_safe
def celery(request: HttpRequest) -> HttpResponse:
    return render(request, "ops/celery.html", {"celery": workers.celery_view(celery_app)})


@staff_required
@require_safe
def journal_list(request: HttpRequest) -> HttpResponse:
    page = page_of(request, journal.entries(), journal.ENTRIES_PER_PAGE)
    return render(request, "ops/journal.html", {"page": page})


@staff_required
@require_safe
def journal_entry(request: HttpRequest, entry_id: str) -> HttpResponse:
    canonical = entry_id.isascii() and entry_id.isdigit() and entry_id[0] != "0"
    if not canonical or len(entry_id) > MAX_ENTRY_DIGITS:
        raise Http404("no such journal entry")
    entry = journal.entry(int(entry_id))
    diff = config.classified(str(entry.params.get("diff", "")))
    return render(request, "ops/entry.html", {"entry": entry, "diff": diff})
