"""Collaborator invitations: the owner invites, the invitee is told and accepts or declines;
until they accept the board is not on their profile and they cannot pin to it; invitations
are rate-limited."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client

from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload


@pytest.fixture
def pair(client: Client, make_user: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """ann owns a secret board "Surprise"; bob is another pinner."""
    users = {name: make_user(name) for name in ("ann", "bob")}
    ann, bob = (Api.as_pinner(client, users[n]) for n in ("ann", "bob"))
    board = ann.post("/boards", {"name": "Surprise", "secret": True}).json()
    return {"ann": ann, "bob": bob, "users": users, "board": board}


def group_boards(api: Api, user_id: str) -> list[str]:
    return [b["name"] for b in api.get(f"/users/{user_id}/group-boards").json()["items"]]


def test_an_invitation_waits_for_the_invitees_answer(pair: dict[str, Any]) -> None:
    ann, bob, board = pair["ann"], pair["bob"], pair["board"]
    path = f"/boards/{board['id']}"
    assert ann.put(f"{path}/collaborators/{bob.id}").status_code == 204
    # Not a collaborator yet: not on his profile, no pinning, not listed as one.
    assert group_boards(bob, bob.id) == [] and group_boards(ann, bob.id) == []
    assert error_of(bob.upload({"board_id": board["id"], "image": image_upload()}), 403)
    assert ann.get(f"{path}/collaborators").json()["items"] == []
    # He is told, and may see the board to decide.
    (told,) = bob.get("/notifications").json()["items"]
    assert told["kind"] == "invite" and told["actor"]["id"] == ann.id
    assert told["board"]["id"] == board["id"] and bob.get(path).status_code == 200
    assert bob.post(f"{path}/invitation").status_code == 204
    assert group_boards(bob, bob.id) == ["Surprise"]
    bob.new_pin(board["id"], image_upload())
    assert bob.get("/notifications").json()["items"] == []  # answered: the invitation goes
    assert error_of(bob.post(f"{path}/invitation"), 404)  # nothing left to accept


def test_a_declined_invitation_leaves_nothing(pair: dict[str, Any]) -> None:
    ann, bob, board = pair["ann"], pair["bob"], pair["board"]
    path = f"/boards/{board['id']}"
    ann.put(f"{path}/collaborators/{bob.id}")
    assert bob.delete(f"{path}/invitation").status_code == 204
    assert bob.get("/notifications").json()["items"] == []
    assert error_of(bob.get(path), 404)  # a secret board he was not let into
    assert error_of(bob.post(f"{path}/invitation"), 404)
    assert group_boards(bob, bob.id) == []
    # The owner may take an invitation back, too.
    ann.put(f"{path}/collaborators/{bob.id}")
    assert ann.delete(f"{path}/collaborators/{bob.id}").status_code == 204
    assert error_of(bob.post(f"{path}/invitation"), 404)
    assert bob.get("/notifications").json()["items"] == []


def test_only_the_invitee_answers(pair: dict[str, Any], make_user: Any, client: Client) -> None:
    ann, bob, board = pair["ann"], pair["bob"], pair["board"]
    carl = Api.as_pinner(client, make_user("carl"))
    ann.put(f"/boards/{board['id']}/collaborators/{bob.id}")
    assert error_of(carl.post(f"/boards/{board['id']}/invitation"), 404)
    assert error_of(ann.post(f"/boards/{board['id']}/invitation"), 404)
    assert error_of(carl.put(f"/boards/{board['id']}/collaborators/{carl.id}"), 404)


def test_invitations_are_rate_limited(pair: dict[str, Any], settings: Any, make_user: Any, client: Client) -> None:  # fmt: skip
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "invite": (2, 3600)}
    caches["ratelimit"].clear()
    ann, board = pair["ann"], pair["board"]
    others = [Api.as_pinner(client, make_user("guest")) for _ in range(3)]
    answers = [ann.put(f"/boards/{board['id']}/collaborators/{o.id}") for o in others]
    assert [a.status_code for a in answers] == [204, 204, 429]
    assert error_of(answers[-1], 429)["code"] == "rate_limited"
    caches["ratelimit"].clear()


def test_the_pages_invite_and_answer(client: Client, pair: dict[str, Any]) -> None:
    users, board = pair["users"], pair["board"]
    page = f"/{users['ann']['username']}/{board['slug']}/"
    log_in(client, users["ann"])
    client.post(f"/boards/{board['id']}/collaborators/", {"username": users["bob"]["username"]})
    assert "invited" in text(client.get(page))
    log_in(client, users["bob"])
    shown = text(client.get("/notifications/"))
    assert "invites you to pin to their board" in shown and "Surprise" in shown
    assert "Group boards" not in text(client.get(f"/{users['bob']['username']}/"))
    response = client.post(f"/boards/{board['id']}/invitation/accept/")
    assert response.status_code == 302 and response["Location"] == page
    assert "Add a pin" in text(client.get(page))
    assert "Group boards" in text(client.get(f"/{users['bob']['username']}/"))
    assert client.post(f"/boards/{board['id']}/invitation/maybe/").status_code == 404
