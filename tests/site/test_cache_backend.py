"""Sessions and rate limits on Redis (pinboard.cache_backend.RedisCache, django-redis), on a
private Redis with its append-only file, as in production: Django's cache contract, a
restart of that Redis keeps every session and count, and while it cannot be reached pages
and log-ins are never an error, and a log-out says it did not happen (it did not)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.test import Client, override_settings

from pinboard.cache_backend import CacheUnreachable, RedisCache, redis_cache
from pinboard.errors import RateLimited
from pinboard.ratelimit import count_attempt
from pinboard.sessions import SessionStore
from tests.conftest import unavailable
from tests.site.page_helpers import board_with_pins, log_in, text
from toolkit.servers.redis import RedisServer

NAMES = ("sessions", "ratelimit")


@pytest.fixture
def kept_redis() -> Iterator[RedisServer]:
    """A private Redis that writes every command to its append-only file, as the deploy's."""
    availability = RedisServer.available()
    if not availability:
        unavailable("Redis", availability.reason)
    server = RedisServer(["--appendonly", "yes", "--appendfsync", "always"]).start()
    yield server
    server.stop()


def on_redis(server: RedisServer) -> Any:
    """CACHES with sessions and rate limits on ``server`` (``default`` in process memory)."""
    return override_settings(
        CACHES={
            "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
            **{name: redis_cache(server.url, name) for name in NAMES},
        }
    )


def signed_in(client: Client, user: dict[str, Any]) -> bool:
    page = text(client.get("/"))
    return "Log out" in page and user["username"] in page


def test_the_django_cache_contract(kept_redis: RedisServer) -> None:
    cache = RedisCache(kept_redis.url, {"KEY_PREFIX": "t", "TIMEOUT": 300})
    assert cache.get("a") is None and cache.get("a", "dflt") == "dflt"
    cache.set("a", {"n": [1, 2]})
    assert cache.get("a") == {"n": [1, 2]}
    assert cache.add("a", "other") is False and cache.add("b", b"\x00bytes") is True
    assert cache.get_many(["a", "b", "c"]) == {"a": {"n": [1, 2]}, "b": b"\x00bytes"}
    cache.set_many({"c": 3, "d": True})
    assert cache.get("d") is True and cache.get("c") == 3
    assert cache.incr("c") == 4 and cache.incr("c", 10) == 14 and cache.decr("c", 20) == -6
    with pytest.raises(ValueError):
        cache.incr("missing")
    assert cache.delete("a") is True and cache.delete("a") is False
    cache.delete_many(["b", "c"])
    assert cache.get_many(["a", "b", "c", "d"]) == {"d": True}
    cache.set("gone", 1, timeout=0)  # Django's 0: expire at once
    assert cache.get("gone") is None
    cache.set("forever", 1, timeout=None)
    assert cache.touch("forever", 60) is True and cache.touch("missing") is False
    other = RedisCache(kept_redis.url, {"KEY_PREFIX": "other"})
    assert other.get("forever") is None  # prefixes apart
    other.set("kept", 1)
    cache.clear()
    assert cache.get("forever") is None and other.get("kept") == 1  # its own keys only
    assert cache.serves()


def test_a_restart_of_their_redis_keeps_sessions_and_rate_limit_counts(
    kept_redis: RedisServer, client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    ada = make_user("ada")
    with on_redis(kept_redis), override_settings(RATE_LIMITS={"login": (3, 60)}):
        log_in(client, ada)
        for _ in range(3):
            count_attempt("login", "addr:10.9.8.7")
        kept_redis.halt(kill=True)  # a crash: what it held is in its append-only file
        kept_redis.restart()
        assert signed_in(client, ada)
        with pytest.raises(RateLimited):
            count_attempt("login", "addr:10.9.8.7")  # the fourth in the window


def test_while_their_redis_is_down_pages_and_log_in_are_never_an_error_and_log_out_says_so(
    kept_redis: RedisServer, client: Client, make_user: Callable[..., dict[str, Any]]
) -> None:
    ada = make_user("ada")
    board_with_pins(ada, "Soup", 1)
    with on_redis(kept_redis):
        log_in(client, ada)
        assert signed_in(client, ada)
        staff = Client()
        staff.force_login(get_user_model().objects.create_user("ops_ida", is_staff=True))
        kept_redis.halt()

        statuses = [client.get(path).status_code for path in ("/", f"/{ada['username']}/")]
        assert statuses == [200, 200]  # looks signed out: the session cannot be read
        count_attempt("login", "addr:10.9.8.7")  # counts nothing, refuses nothing
        assert caches["ratelimit"].get_many(["a", "b"]) == {}
        fresh = SessionStore()
        fresh["pinner"] = 7
        fresh.save()  # a new session: stored, and lost with the server
        with pytest.raises(CacheUnreachable):
            SessionStore(session_key=fresh.session_key).delete()

        other = Client()
        response = other.post("/login/", {"login": ada["username"], "password": "plum-orchard-42"})
        assert response.status_code == 302  # the new session is lost with the server: no 500
        assert other.get("/").status_code == 200
        response = client.post("/logout/")
        assert response.status_code == 503 and response["Retry-After"] == "5"
        assert "You are still logged in" in text(response)
        # The console's log-out is no error either: its session unread, it is anonymous.
        assert staff.post("/admin/logout/").status_code == 302

        kept_redis.restart()
        assert signed_in(client, ada)  # as the log-out said: it did not happen
        assert client.post("/logout/").status_code == 302
        assert not signed_in(client, ada)
        assert client.cookies[settings.SESSION_COOKIE_NAME].value == ""
