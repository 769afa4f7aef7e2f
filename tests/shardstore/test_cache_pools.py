"""Cache pools: one contract, run over LocalPool and over MemcachePool on a real memcached.

Keys carry a prefix of their own per test, so nothing depends on the server being empty.
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from shardstore.cache import LocalPool, PoolStats

_pool_names = itertools.count(1)


@pytest.fixture(params=["local", "memcached"])
def pool(request: pytest.FixtureRequest) -> Any:
    name = f"pool{next(_pool_names)}"
    if request.param == "local":
        return LocalPool(name)
    make: Callable[[str], Any] = request.getfixturevalue("memcached_pool")
    return make(name)


@pytest.fixture
def key() -> Iterator[Callable[[str], str]]:
    prefix = f"t{uuid.uuid4().hex[:12]}:"
    yield lambda name: prefix + name


def test_get_many_returns_only_present_keys(pool: Any, key: Callable[[str], str]) -> None:
    a, b, c = key("a"), key("b"), key("c")
    assert pool.get_many([a, b, c]) == {}
    assert pool.add(a, b"1", 0) is True
    assert pool.add(c, b"\x00\xff binary", 0) is True
    assert pool.get_many([a, b, c]) == {a: b"1", c: b"\x00\xff binary"}
    assert pool.get_many([]) == {}


def test_add_only_if_absent(pool: Any, key: Callable[[str], str]) -> None:
    k = key("k")
    assert pool.add(k, b"first", 0) is True
    assert pool.add(k, b"second", 0) is False
    assert pool.get_many([k]) == {k: b"first"}
    pool.delete_many([k])
    assert pool.add(k, b"third", 0) is True
    assert pool.get_many([k]) == {k: b"third"}


def test_gets_many_and_cas(pool: Any, key: Callable[[str], str]) -> None:
    a, b, missing = key("a"), key("b"), key("missing")
    pool.add(a, b"1", 0)
    pool.add(b, b"2", 0)
    got = pool.gets_many([a, b, missing])
    assert set(got) == {a, b}
    assert got[a][0] == b"1" and got[b][0] == b"2"
    # cas with the token read: stored
    assert pool.cas(a, b"1x", got[a][1], 0) is True
    assert pool.get_many([a]) == {a: b"1x"}
    # the token is spent: a second cas with it fails and changes nothing
    assert pool.cas(a, b"1y", got[a][1], 0) is False
    assert pool.get_many([a]) == {a: b"1x"}


def test_cas_fails_after_another_write(pool: Any, key: Callable[[str], str]) -> None:
    k = key("k")
    pool.add(k, b"v1", 0)
    token = pool.gets_many([k])[k][1]
    assert pool.append(k, b"+") is True  # another writer
    assert pool.cas(k, b"mine", token, 0) is False
    assert pool.get_many([k]) == {k: b"v1+"}
    # after a delete and a fresh add, the old token does not fit either
    token = pool.gets_many([k])[k][1]
    pool.delete_many([k])
    assert pool.cas(k, b"mine", token, 0) is False
    assert pool.get_many([k]) == {}
    pool.add(k, b"again", 0)
    assert pool.cas(k, b"mine", token, 0) is False
    assert pool.get_many([k]) == {k: b"again"}


def test_cas_on_missing_key_fails(pool: Any, key: Callable[[str], str]) -> None:
    k, other = key("k"), key("other")
    pool.add(other, b"x", 0)
    token = pool.gets_many([other])[other][1]
    assert pool.cas(k, b"v", token, 0) is False
    assert pool.get_many([k]) == {}


def test_append(pool: Any, key: Callable[[str], str]) -> None:
    k, missing = key("k"), key("missing")
    assert pool.append(missing, b"x") is False
    assert pool.get_many([missing]) == {}  # append never creates a key
    pool.add(k, b"ab", 0)
    assert pool.append(k, b"cd") is True
    assert pool.append(k, b"\x00e") is True
    assert pool.get_many([k]) == {k: b"abcd\x00e"}


def test_append_keeps_a_claimed_token_from_matching(pool: Any, key: Callable[[str], str]) -> None:
    k = key("k")
    pool.add(k, b"claim", 0)
    token = pool.gets_many([k])[k][1]
    pool.append(k, b"+entry")
    got = pool.gets_many([k])[k]
    assert got[0] == b"claim+entry"
    assert got[1] != token


def test_delete_many(pool: Any, key: Callable[[str], str]) -> None:
    a, b, c, missing = key("a"), key("b"), key("c"), key("missing")
    for k in (a, b, c):
        pool.add(k, b"v", 0)
    pool.delete_many([a, c, missing])
    assert pool.get_many([a, b, c]) == {b: b"v"}
    pool.delete_many([])
    assert pool.get_many([b]) == {b: b"v"}


def test_hits_and_misses_are_counted(pool: Any, key: Callable[[str], str]) -> None:
    a, b, c = key("a"), key("b"), key("c")
    assert pool.stats == PoolStats(pool.name)
    pool.add(a, b"1", 0)
    pool.add(b, b"2", 0)
    before = pool.stats.as_dict()
    pool.get_many([a, b, c])
    pool.get_many([c])
    after = pool.stats.as_dict()
    assert after["hits"] - before["hits"] == 2
    assert after["misses"] - before["misses"] == 2
    assert after["calls"] - before["calls"] == 2  # one multi-get each
    assert set(after) == {"hits", "misses", "calls"}


def test_one_call_per_multi_get(pool: Any, key: Callable[[str], str]) -> None:
    keys = [key(str(i)) for i in range(60)]
    for k in keys[::2]:
        pool.add(k, b"v", 0)
    calls = pool.stats.calls
    found = pool.get_many(keys)
    assert len(found) == 30
    assert pool.stats.calls - calls == 1


def test_local_pool_expiry_without_waiting(key: Callable[[str], str]) -> None:
    pool = LocalPool("expiry")
    k, forever = key("k"), key("forever")
    pool.add(k, b"v", 1)
    pool.add(forever, b"v", 0)
    assert pool.get_many([k]) == {k: b"v"}
    item = pool.memory.items[k]
    pool.memory.items[k] = (item[0], item[1], time.monotonic() - 0.001)  # its second has passed
    assert pool.get_many([k, forever]) == {forever: b"v"}
    assert pool.add(k, b"new", 0) is True  # an expired key is absent for add
    assert pool.append(forever, b"!") is True
    assert pool.get_many([k, forever]) == {k: b"new", forever: b"v!"}


def test_local_pool_expiry_for_real(key: Callable[[str], str]) -> None:
    """A one-second expiry, waited out (1.1 s: LocalPool only, memcached's clock ticks in
    whole seconds and would cost two)."""
    pool = LocalPool("expiry")
    k, cas_key = key("k"), key("cas")
    pool.add(k, b"v", 1)
    pool.add(cas_key, b"claim", 0)
    token = pool.gets_many([cas_key])[cas_key][1]
    assert pool.cas(cas_key, b"filled", token, 1) is True
    assert pool.get_many([k, cas_key]) == {k: b"v", cas_key: b"filled"}
    time.sleep(1.1)
    assert pool.get_many([k, cas_key]) == {}
    assert pool.append(k, b"x") is False


def test_clear_local() -> None:
    pool = LocalPool("x")
    pool.add("a", b"1", 0)
    pool.clear()
    assert pool.get_many(["a"]) == {}
