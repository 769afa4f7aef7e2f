"""Pinners' sessions and rate limits in the deploy: on the broker's Redis, whose append-only
file keeps them through a restart (of memcached, or of that Redis)."""

from __future__ import annotations

from tests.infra import puppet_checks as checks
from tests.infra.puppet_checks import PUPPET_DIR

TEMPLATES = PUPPET_DIR / "modules" / "profile" / "templates"


def test_sessions_are_on_the_brokers_redis_whose_append_only_file_is_on() -> None:
    """A restart of memcached, or of that Redis, logs no one out (pinboard/cache_backend.py)."""
    app = (PUPPET_DIR / "modules/profile/manifests/pinboard/app.pp").read_text()
    assert "'sessions_redis_url' => \"redis://${broker_address}:6379/1\"" in app
    assert "PINBOARD_SESSIONS_REDIS_URL=<%= $sessions_redis_url %>" in (TEMPLATES / "env.epp").read_text()  # fmt: skip
    broker = (PUPPET_DIR / "modules/role/manifests/broker.pp").read_text()
    assert "include profile::redis" in broker
    conf = checks.render(TEMPLATES / "redis.conf.epp", {"address": "10.0.1.30", "maxmemory_mb": 1024})  # fmt: skip
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in conf.splitlines() if line and not line.startswith("#")}  # fmt: skip
    assert lines["appendonly"] == "yes" and lines["appendfsync"] == "everysec"
    assert lines["maxmemory-policy"] == "noeviction"  # full: refused, never a session evicted
