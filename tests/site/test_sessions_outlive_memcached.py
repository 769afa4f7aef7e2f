"""Pinners' sessions and rate limits are on Redis, not memcached: restarting the run's
memcached (the site's cache pools) logs no one out and keeps every rate limit's count.
(``servers`` plane only: on the embedded plane both are in process memory.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from django.conf import settings
from django.contrib.sessions.backends.cache import KEY_PREFIX
from django.test import Client, override_settings

from pinboard.errors import RateLimited
from pinboard.ratelimit import count_attempt
from shardstore.cache.health import health_of
from tests.config_documents import eventually
from tests.site.conftest import SiteServers
from tests.site.page_helpers import log_in, text


@pytest.fixture
def restart_memcached(site_servers: SiteServers, request: pytest.FixtureRequest) -> Iterator[Any]:
    """``restart_memcached()``: stop the run's memcached and start it again, empty, on its
    port; the test ends only once the site's pools use it again."""
    server = request.getfixturevalue("site_memcached_server")

    def restart() -> None:
        server.halt()
        server.restart()

    yield restart
    client = Client()
    assert eventually(lambda: bool(client.get("/")) and health_of(server.address).up, 10)


def sessions_redis(servers: SiteServers) -> Any:
    return redis.Redis.from_url(servers.sessions_redis)


def test_a_memcached_restart_logs_no_one_out(
    site_servers: SiteServers,
    restart_memcached: Callable[[], None],
    client: Client,
    make_user: Callable[..., dict[str, Any]],
) -> None:
    ada = make_user("ada")
    log_in(client, ada)
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    stored = sessions_redis(site_servers)
    try:
        assert stored.exists(f"sessions:1:{KEY_PREFIX}{key}")  # on Redis
    finally:
        stored.close()
    assert ada["username"] in text(client.get("/"))

    restart_memcached()
    page = text(client.get("/"))
    assert "Log out" in page and ada["username"] in page  # still signed in
    assert client.cookies[settings.SESSION_COOKIE_NAME].value == key


def test_a_rate_limit_count_survives_a_memcached_restart(
    site_servers: SiteServers, restart_memcached: Callable[[], None]
) -> None:
    who = "addr:10.7.7.7"
    with override_settings(RATE_LIMITS={"login": (3, 60)}):
        for _ in range(3):
            count_attempt("login", who)
        restart_memcached()
        with pytest.raises(RateLimited):
            count_attempt("login", who)  # the fourth in the window: counted before the restart
    stored = sessions_redis(site_servers)
    try:
        assert stored.keys(f"ratelimit:1:rl:login:{who}:*")  # on Redis
    finally:
        stored.close()
