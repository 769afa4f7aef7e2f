"""``/healthz`` says to anyone only that the process is up; ``/readyz``, the load balancer's,
is 200 only while the process serves a shard map and reaches its shard hosts (else 503
with a short reason), says which config versions it serves, and never where its config
comes from nor a host's address. (With a real config source, under gunicorn:
test_config_live.py.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.test import Client

from pinboard.catalog import CACHE_POOLS, CATALOG
from pinboard.data_plane import plane, use
from pinboard.ops import readiness
from pinboard.plane import DataPlane, build
from shardstore import Store, Topology
from shardstore.cache import LocalMemory, LocalPool
from shardstore.redis_shards import RedisTopology
from toolkit.processes import free_port


def test_liveness_says_nothing_about_internals(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"ok": True}
    assert response["Cache-Control"] == "no-store"


def test_readiness_says_the_config_versions_served(client: Client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    report = response.json()
    assert report["ok"] is True and report["reason"] is None
    assert report["config"] == plane().versions
    assert set(report) == {"ok", "reason", "process", "config", "source"}


def test_readiness_answers_no_request_the_load_balancer_forwarded(client: Client) -> None:
    """Its rule matches ``/readyz`` as sent; the site sees the path decoded, so any other
    spelling would pass it: a request that carries a client's X-Forwarded-For is a 404."""
    for path in ("/readyz", "/read%79z", "/%72eadyz"):
        response = client.get(path, headers={"X-Forwarded-For": "203.0.113.9"})
        assert response.status_code == 404 and b"config" not in response.content, path
    assert client.get("/read%79z").status_code == 200  # the health check's own: no header


@pytest.fixture
def on_hosts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``on_hosts(address, ...)``: this process serves a map of one range per address (the
    run's own plane comes back after the test); ``readiness._clock`` is the test's."""
    clock = [1000.0]
    monkeypatch.setattr(readiness, "_clock", lambda: clock[0])
    previous: list[DataPlane | None] = []

    def serve(*addresses: str) -> None:
        per = 16 // len(addresses)
        topology = Topology.from_json(
            {
                "version": 7,
                "shard_count": 16,
                "hosts": {f"db{n}": address for n, address in enumerate(addresses, 1)},
                "ranges": [
                    {"range": [i * per, (i + 1) * per - 1], "master": f"db{i + 1}"}
                    for i in range(len(addresses))
                ],
                "open": [[0, 15]],
                "lookup_shards": 16,
            }
        )
        memory = LocalMemory()
        pools = {name: LocalPool(name, memory) for name in CACHE_POOLS}
        built = build(
            Store(topology, catalog=CATALOG), pools, RedisTopology.single("memory://ready")
        )
        previous.append(use(built))

    serve.clock = clock  # type: ignore[attr-defined]
    yield serve
    if previous:
        use(previous[0])


def test_a_shard_host_that_is_not_there_makes_the_process_unready_and_its_check_is_reused(
    client: Client, on_hosts: Callable[..., None], tmp_path: Path
) -> None:
    here, gone = tmp_path / "here", tmp_path / "gone"
    here.mkdir()
    on_hosts(f"sqlite://{here}", f"sqlite://{gone}")
    response = client.get("/readyz")
    assert response.status_code == 503 and response["Cache-Control"] == "no-store"
    report = response.json()
    assert report["ok"] is False
    assert report["reason"] == "1 of 2 shard hosts unreachable: db2 (its directory is not there)"
    assert report["config"] == plane().versions  # what it serves, all the same
    assert str(tmp_path) not in response.content.decode()
    assert client.get("/healthz").json() == {"ok": True}  # alive all the same

    gone.mkdir()
    clock = on_hosts.clock  # type: ignore[attr-defined]
    clock[0] += readiness.CHECK_SECONDS / 2
    assert client.get("/readyz").status_code == 503  # the last check, reused: hosts not asked
    clock[0] += readiness.CHECK_SECONDS
    response = client.get("/readyz")
    assert response.status_code == 200 and response.json()["reason"] is None


def test_a_mysql_host_that_does_not_answer_makes_the_process_unready(
    client: Client, on_hosts: Callable[..., None]
) -> None:
    """(On the servers plane, the first test's 200 is that of MariaDB hosts that answer.)"""
    pytest.importorskip("MySQLdb", reason="needs mysqlclient (requirements-mysql.txt)")
    port = free_port()  # nothing listens there
    on_hosts(f"mysql://pinboard@127.0.0.1:{port}")
    response = client.get("/readyz")
    assert response.status_code == 503
    reason = response.json()["reason"]
    assert reason.startswith("1 of 1 shard hosts unreachable: db1 (MySQL error 2")
    assert str(port) not in reason and "127.0.0.1" not in reason
