"""Mod shard: md5(key) % 4096."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardstore.modshard import bucket


def test_seed_example() -> None:
    expected = int(hashlib.md5(b"1.2.3.4").hexdigest(), 16) % 4096
    assert bucket("1.2.3.4") == expected
    # md5("1.2.3.4") = 2a1e...; its value mod 4096 is its last three hex digits.
    digest = hashlib.md5(b"1.2.3.4").hexdigest()
    assert bucket("1.2.3.4") == int(digest[-3:], 16)


@pytest.mark.parametrize(
    "key", ["ada", "Ada", "ada@example.com", "\u00e9l\u00e8ve", "\U0001f600", "x" * 255]
)
def test_bucket_is_md5_of_utf8(key: str) -> None:
    assert bucket(key) == int(hashlib.md5(key.encode("utf-8")).hexdigest(), 16) % 4096


@given(st.text())
def test_bucket_range(key: str) -> None:
    assert 0 <= bucket(key) < 4096
    assert bucket(key) == int(hashlib.md5(key.encode("utf-8")).hexdigest(), 16) % 4096


def test_buckets_spread() -> None:
    assert len({bucket(f"user{i}") for i in range(2000)}) > 1500
