"""A memcached server that goes away and comes back: misses meanwhile, never an error, and
nothing stale once it serves again.

Two outages, on private servers the tests start: a server stopped and restarted
(it comes back empty), and a server cut off by the network (``toolkit.cutoff``: it
comes back with everything it held, including values that writes made stale while
their deletes could not reach it). The store behind the pools is SQLite: the
outage is the cache's.
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from pymemcache.client.base import Client

from shardstore import Store
from shardstore.cache import CachedStore, MemcachePool
from shardstore.cache.health import forget, health_of
from shardstore.ids import shard_of
from tests.conftest import unavailable
from toolkit.cutoff import CutOff
from toolkit.servers.memcached import MemcachedServer

from .catalog import CATALOG
from .conftest import two_host_topology

POOL_NAMES = ("accounts", "folders", "notes", "lists")
_runs = itertools.count(1)


@pytest.fixture
def start_memcached() -> Iterator[Callable[[], MemcachedServer]]:
    """``start_memcached()``: a memcached of this test alone, which it may halt and restart."""
    availability = MemcachedServer.available()
    if not availability:
        unavailable("memcached", availability.reason)
    started: list[MemcachedServer] = []

    def start() -> MemcachedServer:
        server = MemcachedServer().start()
        forget(server.address)  # its port may have been another test's server's
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def store(sqlite_template: Path, tmp_path: Path) -> Iterator[Store]:
    for host in ("hostA", "hostB"):
        shutil.copytree(sqlite_template / host, tmp_path / host)
    plain = Store(
        two_host_topology(f"sqlite://{tmp_path / 'hostA'}", f"sqlite://{tmp_path / 'hostB'}"),
        catalog=CATALOG,
    )
    yield plain
    plain.close()


class Cache:
    """A CachedStore whose pools all live on ``servers``, and a raw client for each server."""

    def __init__(
        self, store: Store, servers: list[str], *, retry_seconds: float, timeout: float = 0.5
    ) -> None:
        self.servers = servers
        self.pools = {
            name: MemcachePool(name, servers, retry_seconds=retry_seconds, timeout=timeout)
            for name in POOL_NAMES
        }
        self.cached = CachedStore(store, self.pools)
        self.health = {address: health_of(address) for address in servers}

    def close(self) -> None:
        for pool in self.pools.values():
            pool.close()


@pytest.fixture
def make_cache(store: Store) -> Iterator[Callable[..., Cache]]:
    made: list[Cache] = []

    def make(servers: list[str], *, retry_seconds: float = 0.0, timeout: float = 0.5) -> Cache:
        cache = Cache(store, servers, retry_seconds=retry_seconds, timeout=timeout)
        made.append(cache)
        return cache

    yield make
    for cache in made:
        cache.close()


def raw(address: str) -> Client:
    """A client straight to the server. Its writes wait for the reply: one sent without
    (pymemcache's default) may be applied after a command the test sends next on another
    connection, such as the pool's flush."""
    host, port = address.rsplit(":", 1)
    return Client((host, int(port)), connect_timeout=2, timeout=2, default_noreply=False)


def new_folder(cached: CachedStore, title: str, shard: int = 3) -> int:
    return cached.objects("folder").create(shard, {"title": title, "n": 0})


def counting_errors(errors: list[BaseException], operation: Callable[[], Any]) -> Any:
    try:
        return operation()
    except Exception as error:  # noqa: BLE001 - counted: the test asserts there are none
        errors.append(error)
        return None


def test_a_stopped_server_is_a_miss_never_an_error_and_is_tried_again_only_at_its_retry(
    start_memcached: Callable[[], MemcachedServer], make_cache: Callable[..., Cache]
) -> None:
    server = start_memcached()
    cache = make_cache([server.address], retry_seconds=3600)  # no retry during the outage
    cached = cache.cached
    folder = new_folder(cached, "soup")
    notes = [cached.objects("note").create(shard_of(folder), {"n": n}) for n in range(3)]
    for note in notes[:2]:
        cached.mapping("folder_has_notes").add(folder, note)
    assert cached.objects("folder").get(folder)["title"] == "soup"  # cached
    assert cached.mapping("folder_has_notes").page(folder).ids == notes[1::-1]

    server.halt(kill=True)
    errors: list[BaseException] = []
    rounds = 20
    for n in range(rounds):
        counting_errors(errors, lambda n=n: cached.objects("folder").update(folder, {"n": n}))
        got = counting_errors(errors, lambda: cached.objects("folder").get(folder))
        assert got is not None and got["n"] == n  # read from SQL, never a stale copy
    counting_errors(errors, lambda: cached.mapping("folder_has_notes").add(folder, notes[2]))
    page = counting_errors(errors, lambda: cached.mapping("folder_has_notes").page(folder))
    count = counting_errors(errors, lambda: cached.mapping("folder_has_notes").count(folder))
    assert errors == []
    assert page.ids == notes[::-1] and count == 3
    health = cache.health[server.address]
    assert not health.up
    assert health.stats.failures == 1  # the first command; every later one is a miss...
    assert health.stats.skipped >= 2 * rounds  # ...without waiting on the server again
    assert health.stats.probes == 0
    assert health.pending() > 0  # what it missed, kept for its return

    server.restart()
    health.retry_seconds = 0.0  # the retry is due
    assert cached.objects("folder").get(folder)["n"] == rounds - 1
    assert health.up and health.stats.probes == 1 and health.pending() == 0
    hits = cache.pools["folders"].stats.hits
    assert cached.objects("folder").get(folder)["n"] == rounds - 1
    assert cache.pools["folders"].stats.hits == hits + 1  # it serves again


def test_a_server_cut_off_and_back_serves_nothing_stale_and_keeps_the_rest(
    start_memcached: Callable[[], MemcachedServer], make_cache: Callable[..., Cache]
) -> None:
    server = start_memcached()
    with CutOff(server.host, server.port) as link:
        cache = make_cache([link.address])
        cached = cache.cached
        folder, other = new_folder(cached, "soup"), new_folder(cached, "cake")
        notes = [cached.objects("note").create(shard_of(folder), {"n": n}) for n in range(3)]
        lists = cached.mapping("folder_has_notes")
        lists.add(folder, notes[0])
        lists.add(folder, notes[1])
        assert cached.objects("folder").get(folder)["title"] == "soup"
        assert cached.objects("folder").get(other)["title"] == "cake"
        assert lists.page(folder).ids == [notes[1], notes[0]] and lists.count(folder) == 2
        direct = raw(server.address)
        direct.set("bystander", b"a session, say")
        folder_key = cached.objects("folder").key(folder)
        assert direct.get(folder_key) is not None

        link.cut()
        cached.objects("folder").update(folder, {"title": "soup, edited"})
        lists.add(folder, notes[2])  # the append is lost
        lists.remove(folder, notes[0])  # and so is the delete
        # The server still holds what these writes made stale: the danger is real.
        assert b"soup" in direct.get(folder_key) and b"edited" not in direct.get(folder_key)

        link.heal()
        assert cached.objects("folder").get(folder)["title"] == "soup, edited"
        assert lists.page(folder).ids == [notes[2], notes[1]]
        assert lists.count(folder) == 2
        assert cached.objects("folder").get(other)["title"] == "cake"
        health = cache.health[link.address]
        assert health.up and health.stats.replayed >= 3 and health.stats.flushes == 0
        assert direct.get("bystander") == b"a session, say"  # replayed, not flushed
        direct.close()


def test_a_frozen_server_costs_one_timeout_then_misses_and_serves_fresh_once_thawed(
    start_memcached: Callable[[], MemcachedServer], make_cache: Callable[..., Cache]
) -> None:
    """A stalled server (SIGSTOP: connections open, nothing answers) times out once; the
    process does not wait on it again until its retry, and reads come from SQL."""
    server = start_memcached()
    cache = make_cache([server.address], retry_seconds=3600, timeout=0.2)
    cached = cache.cached
    folder = new_folder(cached, "soup")
    assert cached.objects("folder").get(folder)["title"] == "soup"
    health = cache.health[server.address]
    pid = server.pid
    assert pid is not None
    errors: list[BaseException] = []
    os.kill(pid, signal.SIGSTOP)
    try:
        for n in range(5):
            counting_errors(errors, partial(cached.objects("folder").update, folder, {"n": n}))
            got = counting_errors(errors, partial(cached.objects("folder").get, folder))
            assert got is not None and got["n"] == n
        assert errors == [] and health.stats.failures == 1 and not health.up
    finally:
        os.kill(pid, signal.SIGCONT)
    health.retry_seconds = 0.0
    assert cached.objects("folder").get(folder)["n"] == 4
    assert health.up and health.pending() == 0
    assert cached.objects("folder").get(folder)["n"] == 4  # now from the cache
    direct = raw(server.address)
    assert direct.get(cached.objects("folder").key(folder)) is not None
    direct.close()


def test_a_server_that_missed_too_much_is_flushed_before_it_serves(
    start_memcached: Callable[[], MemcachedServer], make_cache: Callable[..., Cache]
) -> None:
    server = start_memcached()
    with CutOff(server.host, server.port) as link:
        cache = make_cache([link.address])
        cached = cache.cached
        folders = [new_folder(cached, f"b{n}") for n in range(5)]
        for folder in folders:
            cached.objects("folder").get(folder)
        direct = raw(server.address)
        direct.set("bystander", b"x")
        health = cache.health[link.address]
        health.max_missed = 2

        link.cut()
        for folder in folders:
            cached.objects("folder").update(folder, {"title": "new"})
        link.heal()
        assert [cached.objects("folder").get(b)["title"] for b in folders] == ["new"] * 5
        assert health.stats.flushes == 1 and health.stats.replayed == 0
        assert direct.get("bystander") is None
        direct.close()


def test_keys_of_a_stopped_server_are_not_cached_on_another(
    start_memcached: Callable[[], MemcachedServer], make_cache: Callable[..., Cache]
) -> None:
    """Rerouting a dead server's keys would leave copies behind that nothing invalidates
    once the keys route home again: they stay misses until their server is back."""
    a, b = start_memcached(), start_memcached()
    cache = make_cache([a.address, b.address], retry_seconds=3600)
    cached = cache.cached
    folders = [new_folder(cached, f"b{n}") for n in range(16)]
    pool = cache.pools["folders"]
    on_a = [x for x in folders if pool.server_of(cached.objects("folder").key(x)) == a.address]
    on_b = [x for x in folders if x not in on_a]
    assert on_a and on_b  # rendezvous hashing spreads 16 keys over both

    a.halt(kill=True)
    for folder in folders:
        assert cached.objects("folder").get(folder)["title"].startswith("b")
    direct_b = raw(b.address)
    keys_a = [cached.objects("folder").key(x) for x in on_a]
    keys_b = [cached.objects("folder").key(x) for x in on_b]
    assert direct_b.get_many(keys_a) == {}
    assert set(direct_b.get_many(keys_b)) == set(keys_b)  # B serves its own meanwhile

    a.restart()
    cache.health[a.address].retry_seconds = 0.0
    for folder in on_a:
        cached.objects("folder").get(folder)
    direct_a = raw(a.address)
    assert set(direct_a.get_many(keys_a)) == set(keys_a)
    direct_a.close()
    direct_b.close()


def test_claims_are_in_place_when_a_claim_returns_even_on_a_slow_link(
    start_memcached: Callable[[], MemcachedServer],
) -> None:
    """A filler reads the database right after its claims: a claim still on its way could
    land after a writer's delete and let the filler store what it read before the write."""
    server = start_memcached()
    with CutOff(server.host, server.port, delay=0.05) as link:
        pool = MemcachePool("slow", [link.address], retry_seconds=3600)
        direct = raw(server.address)
        try:
            claims = {f"claim-{n}": b"\x00filling-mine" for n in range(3)}
            held = pool.claim(link.address, claims, 10)
            assert direct.get_many(list(claims)) == claims
            assert {k: v for k, (v, _token) in held.items()} == claims
        finally:
            pool.close()
            direct.close()


def test_no_error_and_no_stale_read_while_a_server_is_cut_off_and_healed_under_load(
    start_memcached: Callable[[], MemcachedServer], make_cache: Callable[..., Cache]
) -> None:
    """A writer bumps versions of 8 folders (each acknowledged after its write returns);
    readers check that every read that began after an acknowledgement sees at least that
    version. The link is cut and healed twice meanwhile."""
    server = start_memcached()
    with CutOff(server.host, server.port) as link:
        cache = make_cache([link.address], retry_seconds=0.01)
        cached = cache.cached
        folders = [new_folder(cached, f"b{n}") for n in range(8)]
        acked = dict.fromkeys(folders, 0)
        errors: list[BaseException] = []
        stale: list[tuple[int, int, int]] = []
        reads = [0]
        writes_done = threading.Event()
        lock = threading.Lock()

        # The link is cut at the 150th write, healed at the 250th, cut at the 400th...
        stages = {n: threading.Event() for n in (150, 250, 400, 500)}

        def writer() -> None:
            rng = random.Random(1)
            for n in range(1, 601):
                folder = rng.choice(folders)
                update = partial(cached.objects("folder").update, folder, {"n": n})
                if counting_errors(errors, update):
                    acked[folder] = n
                if n in stages:
                    stages[n].set()
                    time.sleep(0.05)  # let readers meet the link in its new state
            writes_done.set()

        def reader(seed: int) -> None:
            rng = random.Random(seed)
            for _ in range(3000):
                folder = rng.choice(folders)
                floor = acked[folder]
                got = counting_errors(errors, partial(cached.objects("folder").get, folder))
                with lock:
                    reads[0] += 1
                    if got is None or got["n"] < floor:
                        stale.append((folder, floor, got["n"] if got else -1))
                if writes_done.is_set():
                    return

        threads = [threading.Thread(target=writer)]
        threads += [threading.Thread(target=reader, args=(seed,)) for seed in range(3)]
        for thread in threads:
            thread.start()
        for n, stage in sorted(stages.items()):
            assert stage.wait(timeout=60)
            link.heal() if n in (250, 500) else link.cut()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads)

        assert errors == [] and stale == []
        health = cache.health[link.address]
        assert health.stats.failures >= 1  # the outage happened under load
        final = {b: cached.objects("folder").get(b)["n"] for b in folders}  # the retry is due
        assert final == acked
        hits = cache.pools["folders"].stats.hits
        assert {b: cached.objects("folder").get(b)["n"] for b in folders} == acked
        assert health.up and cache.pools["folders"].stats.hits == hits + len(folders)
        assert reads[0] > 100
