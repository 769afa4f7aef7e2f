"""A member's likes of a secret board's pins: their likes page (and the API's list) shows
each like only to those who may see its pin, fills its pages with the others, and no page's
cursor names a like it left out (a cursor is the place of a page's last like: its pin's ID
and the time it was liked)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from pinboard.boards.actions import create_board
from pinboard.boards.collaborators import accept_invitation, invite
from pinboard.likes import queries
from pinboard.likes.actions import like
from pinboard.pins.actions import create_pin
from shardstore import cursors
from tests.site.api_client import Api
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload


@pytest.fixture
def world(client: Client, make_user: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """ann's public board and her secret one, which bob is a member of; bob likes (oldest
    first) public 1, secret 1, secret 2, public 2, secret 3. carl is a stranger."""
    users = {name: make_user(name) for name in ("ann", "bob", "carl")}
    ann, bob = users["ann"]["id"], users["bob"]["id"]
    garden, diary = create_board(ann, "Garden"), create_board(ann, "Diary", secret=True)
    invite(ann, diary["id"], bob)
    accept_invitation(bob, diary["id"])

    def pin(board: dict[str, Any], words: str) -> int:
        return int(create_pin(ann, board["id"], image_upload(), words)["id"])

    public = [pin(garden, "public one"), pin(garden, "public two")]
    secret = [pin(diary, f"secret {n}") for n in ("one", "two", "three")]
    for liked in (public[0], secret[0], secret[1], public[1], secret[2]):
        like(bob, liked)
    apis = {name: Api.as_pinner(client, user) for name, user in users.items()}
    return {**apis, "anon": Api(client), "users": users, "public": public, "secret": secret}


def pages(api: Api, user_id: str, limit: int) -> list[tuple[list[int], str | None]]:
    """Every page of the pinner's likes as ``api`` reads them: (pin IDs, next cursor)."""
    read, cursor = [], None
    while True:
        params = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        body = api.get(f"/users/{user_id}/likes", **params).json()
        cursor = body["next"]
        read.append(([int(pin["id"]) for pin in body["items"]], cursor))
        if cursor is None:
            return read


def named_by(cursor: str | None) -> int | None:
    return None if cursor is None else cursors.decode(cursor)[1]


def test_others_read_full_pages_of_the_likes_they_may_see_and_no_cursor_names_another(
    world: dict[str, Any],
) -> None:
    bob, public, secret = world["bob"], world["public"], world["secret"]
    for reader in ("carl", "anon"):
        read = pages(world[reader], bob.id, limit=1)
        assert read == [([public[1]], read[0][1]), ([public[0]], None)], reader
        assert named_by(read[0][1]) == public[1]  # the last like shown, not one left out
        assert world[reader].get(f"/users/{bob.id}").json()["like_count"] == 2
    everything = [secret[2], public[1], secret[1], secret[0], public[0]]
    for member in ("ann", "bob"):  # who may see the secret pins: all of them, in order
        read = pages(world[member], bob.id, limit=2)
        assert [pin for ids, _ in read for pin in ids] == everything, member
        assert [len(ids) for ids, _ in read] == [2, 2, 1]


def test_the_likes_page_shows_others_no_like_of_a_secret_pin(
    client: Client, world: dict[str, Any]
) -> None:
    users = world["users"]
    log_in(client, users["carl"])
    page = text(client.get(f"/{users['bob']['username']}/likes/"))
    assert "public one" in page and "public two" in page and "secret" not in page
    assert "<strong>2</strong> likes<" in page
    log_in(client, users["ann"])
    page = text(client.get(f"/{users['bob']['username']}/likes/"))
    assert all(f"secret {n}" in page for n in ("one", "two", "three"))


def test_a_wall_of_likes_one_may_not_see_ends_the_list_without_naming_them(
    world: dict[str, Any],
) -> None:
    """A page reads at most ``READS`` times its size past the likes it shows: what lies
    beyond a longer run of likes the reader may not see is not shown to them (no cursor
    names a like of that run)."""
    users, bob = world["users"], world["bob"]
    diary = create_board(users["ann"]["id"], "Wall", secret=True)
    invite(users["ann"]["id"], diary["id"], users["bob"]["id"])
    accept_invitation(users["bob"]["id"], diary["id"])
    for n in range(queries.READS):
        pin = create_pin(users["ann"]["id"], diary["id"], image_upload(), f"wall {n}")
        like(users["bob"]["id"], pin["id"])
    assert pages(world["carl"], bob.id, limit=1) == [([], None)]
    read = pages(world["carl"], bob.id, limit=queries.READS)  # past it in two reads
    assert read == [([world["public"][1], world["public"][0]], None)]
