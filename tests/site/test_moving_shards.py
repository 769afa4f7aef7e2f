"""A write to a shard that is changing hands is refused, typed, never lost silently: the API
and the pages answer 503 with ``Retry-After``, nothing is written, and reads go on."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from pinboard.boards.queries import boards_page
from shardstore import Topology, shard_of
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in


@pytest.fixture
def moving(site_store: Any) -> Iterator[Callable[[int], None]]:
    """``moving(shard)`` puts the shard in a read-only window; the map is put back after."""
    plain = site_store.store
    before = plain.topology

    def freeze(shard: int) -> None:
        document = {
            **before.as_json(),
            "version": before.version + 1,
            "read_only": [[shard, shard]],
        }
        plain.set_topology(Topology.from_json(document))

    yield freeze
    plain.set_topology(before)


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
