"""Sessions and rate limits on memcached (pinboard.cache_backend.PoolCache), on private servers:
Django's cache contract, a server down is a miss and never an exception, and a log-out
made while a server was cut off does not come back with it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import InvalidCacheKey, caches
from django.test import Client, override_settings

from pinboard.cache_backend import PoolCache, close_pools
from pinboard.ratelimit import count_attempt
from pinboard.sessions import SessionStore
from shardstore.cache.health import forget, health_of
from tests.conftest import unavailable
from tests.site.page_helpers import board_with_pins, log_in
from toolkit.cutoff import CutOff
from toolkit.servers.memcached import MemcachedServer


@pytest.fixture
def start_memcached() -> Iterator[Callable[[], MemcachedServer]]:
    availability = MemcachedServer.available()
    if not availability:
        unavailable("memcached", availability.reason)
    started: list[MemcachedServer] = []

    def start() -> MemcachedServer:
        started.append(MemcachedServer().start())
        forget(started[-1].address)  # its port may have been another test's server's
        return started[-1]

    yield start
    close_pools()
    for server in started:
        server.stop()


def pool_cache(address: str, prefix: str = "t") -> PoolCache:
    return PoolCache([address], {"KEY_PREFIX": prefix, "TIMEOUT": 300})


def on_memcached(address: str, *names: str) -> dict[str, Any]:
    """CACHES with these on ``address`` through PoolCache (``default`` in process memory)."""
    setting: dict[str, Any] = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    }
    for name in names:
        setting[name] = {
            "BACKEND": "pinboard.cache_backend.PoolCache",
            "LOCATION": [address],
            "KEY_PREFIX": name,
        }
    return setting


def test_the_django_cache_contract(start_memcached: Callable[[], MemcachedServer]) -> None:
    cache = pool_cache(start_memcached().address)
    assert cache.get("a") is None and cache.get("a", "dflt") == "dflt"
    cache.set("a", {"n": [1, 2]})
    assert cache.get("a") == {"n": [1, 2]}
    assert cache.add("a", "other") is False and cache.add("b", b"\x00bytes") is True
    assert cache.get_many(["a", "b", "c"]) == {"a": {"n": [1, 2]}, "b": b"\x00bytes"}
    cache.set_many({"c": 3, "d": True})
    assert cache.get("d") is True and cache.get("c") == 3
    assert cache.incr("c") == 4 and cache.incr("c", 10) == 14 and cache.decr("c", 20) == 0
    with pytest.raises(ValueError):
        cache.incr("missing")
    assert cache.delete("a") is True and cache.delete("a") is False
    cache.delete_many(["b", "c"])
    assert cache.get_many(["a", "b", "c", "d"]) == {"d": True}
    cache.set("gone", 1, timeout=0)  # Django's 0: expire at once
    assert cache.get("gone") is None
    cache.set("forever", 1, timeout=None)
    assert cache.touch("forever", 60) is True and cache.touch("missing") is False
    assert cache.has_key("forever") and "forever" in cache
    assert pool_cache(cache.pool.servers[0], "other").get("forever") is None  # prefixes apart
    with pytest.raises(InvalidCacheKey):
        cache.get("a key with spaces")


def test_a_stopped_server_is_a_miss_for_sessions_and_rate_limits_never_an_error(
    start_memcached: Callable[[], MemcachedServer],
) -> None:
    server = start_memcached()
    with override_settings(CACHES=on_memcached(server.address, "sessions", "ratelimit")):
        session = SessionStore()
        session["pinner"] = 42
        session.save()
        key = session.session_key
        assert SessionStore(session_key=key).load() == {"pinner": 42}
        health = health_of(server.address)
        health.retry_seconds = 3600
        server.halt(kill=True)
        errors: list[BaseException] = []
        for _ in range(5):
            try:
                assert SessionStore(session_key=key).load() == {}  # looks logged out
                fresh = SessionStore()
                fresh["pinner"] = 7
                fresh.save()
                SessionStore(session_key=key).delete()
                count_attempt("login", "addr:10.0.0.1")  # counts nothing, refuses nothing
                caches["ratelimit"].get_many(["a", "b"])
            except Exception as error:  # noqa: BLE001 - counted: there must be none
                errors.append(error)
        assert errors == []
        assert health.stats.failures == 1 and not health.up  # tried once, then left alone

        server.restart()
        health.retry_seconds = 0.0
        again = SessionStore()
        again["pinner"] = 9
        again.save()
        assert SessionStore(session_key=again.session_key).load() == {"pinner": 9}
        assert health.up


def test_a_log_out_made_while_a_server_was_cut_off_does_not_come_back_with_it(
    start_memcached: Callable[[], MemcachedServer],
) -> None:
    server = start_memcached()
    with (
        CutOff(server.host, server.port) as link,
        override_settings(CACHES=on_memcached(link.address, "sessions")),
    ):
        health_of(link.address).retry_seconds = 0.0
        session = SessionStore()
        session["pinner"] = 42
        session.save()
        key = session.session_key
        direct = pool_cache(server.address, "sessions")  # the server itself, past the link
        assert direct.get(session.cache_key) == {"pinner": 42}

        link.cut()
        SessionStore(session_key=key).delete()  # the log-out: its delete is lost...
        assert direct.get(session.cache_key) == {"pinner": 42}  # ...the server still has it
        link.heal()
        assert SessionStore(session_key=key).load() == {}  # replayed first: still logged out
        assert direct.get(session.cache_key) is None
        assert health_of(link.address).up


def test_pages_and_log_in_while_the_sessions_server_is_down_are_never_an_error(
    start_memcached: Callable[[], MemcachedServer],
    client: Client,
    make_user: Callable[..., dict[str, Any]],
) -> None:
    server = start_memcached()
    ada = make_user("ada")
    board_with_pins(ada, "Soup", 1)
    with override_settings(CACHES=on_memcached(server.address, "sessions", "ratelimit")):
        log_in(client, ada)
        assert ada["username"].encode() in client.get("/").content  # signed in
        health_of(server.address).retry_seconds = 3600
        server.halt(kill=True)
        statuses = [client.get(path).status_code for path in ("/", f"/{ada['username']}/")]
        assert statuses == [200, 200]  # signed out, as if the session had expired
        response = client.post("/login/", {"login": ada["username"], "password": "plum-orchard-42"})
        assert response.status_code == 302  # the session is lost with the server: no 500
        assert client.get("/").status_code == 200
        server.restart()
        health_of(server.address).retry_seconds = 0.0
        log_in(client, ada)
        assert ada["username"].encode() in client.get("/").content  # signed in again
