"""A write to a shard that is changing hands waits a moment for the move to end; if it does
not end, the write is refused, typed, never lost silently: the API and the pages answer 503
with ``Retry-After``, nothing is written, and reads go on. A read the host refuses (a copy
a revert left frozen, read by a process on a stale map) is a 503 to retry too."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from pinboard.boards.queries import boards_page
from pinboard.data_plane import cached_store
from shardstore import ShardReadOnly, ShardUnavailable, Topology, shard_of
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in


@pytest.fixture
def moving(site_store: Any) -> Iterator[Callable[[int], None]]:
    """``moving(shard)`` puts the shard in a read-only window, which writes wait out for
    0.2 s only; the map is put back after."""
    plain = site_store.store
    before, hold = plain.topology, plain.hold_seconds
    plain.hold_seconds = 0.2

    def freeze(shard: int) -> None:
        document = {
            **before.as_json(),
            "version": before.version + 1,
            "read_only": [[shard, shard]],
        }
        plain.set_topology(Topology.from_json(document))

    yield freeze
    plain.set_topology(before)
    plain.hold_seconds = hold


def test_the_api_answers_503_with_retry_after_and_writes_nothing(
    client: Client, make_user: Callable[..., dict[str, Any]], moving: Callable[[int], None]
) -> None:
    ada = Api.as_pinner(client, make_user("ada"))
    boards = boards_page(int(ada.id)).ids
    moving(shard_of(int(ada.id)))
    response = ada.post("/boards", {"name": "Caught in the move"})
    assert error_of(response, 503)["code"] == "unavailable"
    assert response["Retry-After"] == "1"
    assert ada.get(f"/users/{ada.id}").status_code == 200  # reads go on
    assert boards_page(int(ada.id)).ids == boards


def test_a_page_answers_503_with_retry_after_and_writes_nothing(
    client: Client, make_user: Callable[..., dict[str, Any]], moving: Callable[[int], None]
) -> None:
    bea = make_user("bea")
    log_in(client, bea)
    boards = boards_page(bea["id"]).ids
    moving(shard_of(bea["id"]))
    response = client.post("/boards/new/", {"name": "Caught in the move"})
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert b"Nothing you sent was saved" in response.content
    assert boards_page(bea["id"]).ids == boards


def test_a_write_that_meets_a_short_window_waits_for_it_and_lands(
    client: Client,
    make_user: Callable[..., dict[str, Any]],
    moving: Callable[[int], None],
    site_store: Any,
) -> None:
    ada = Api.as_pinner(client, make_user("ada"))
    moving(shard_of(int(ada.id)))
    plain = site_store.store
    plain.hold_seconds = 5.0
    ended = plain.topology.as_json()
    del ended["read_only"]
    ended["version"] += 1
    window_ends = threading.Timer(0.3, plain.set_topology, args=(Topology.from_json(ended),))
    window_ends.start()
    response = ada.post("/boards", {"name": "Held through the move"})
    window_ends.join()
    assert response.status_code == 201
    assert int(response.json()["id"]) in boards_page(int(ada.id)).ids


def test_a_read_the_host_refuses_answers_503_with_retry_after(
    client: Client,
    make_user: Callable[..., dict[str, Any]],
    site_store: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What MySQL answers a process on a stale map that reads a reverted split's frozen
    copy (``ShardReadOnly``: "no longer serves it", tests/shardstore/test_split_fence.py)
    is a 503 with ``Retry-After`` for the API and the pages, never a 500."""
    ada = Api.as_pinner(client, make_user("ada"))
    cara = make_user("cara")
    assert ada.get(f"/users/{ada.id}").status_code == 200  # ada's own reads are cached
    cached_store().objects("user").forget([cara["id"]])  # cara's is read from MySQL

    def refused(selects: Any) -> Any:
        raise ShardReadOnly(shard_of(cara["id"]), "B", "the host no longer serves it (moved)")

    monkeypatch.setattr(site_store.store, "select_each", refused)
    response = ada.get(f"/users/{cara['id']}")
    assert error_of(response, 503)["code"] == "unavailable"
    assert response["Retry-After"] == "1"
    page = Client().get(f"/{cara['username']}/")
    assert page.status_code == 503
    assert page["Retry-After"] == "1"


def test_a_write_whose_pinner_cannot_be_read_answers_503_not_500(
    client: Client,
    make_user: Callable[..., dict[str, Any]],
    site_store: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The write limit per pinner reads the token's pinner before the view runs: with their
    master dead (its host down, before a failover), that read fails, and so must the write,
    as a 503 to retry (nemesis case k met a 500 there)."""
    ada = Api.as_pinner(client, make_user("ada"))
    cached_store().objects("user").forget([int(ada.id)])

    def down(selects: Any) -> Any:
        raise ShardUnavailable(shard_of(int(ada.id)), "A", "Can't connect to server (115)")

    monkeypatch.setattr(site_store.store, "select_each", down)
    response = ada.post("/boards", {"name": "Never written"})
    assert error_of(response, 503)["code"] == "unavailable"
    assert response["Retry-After"]
