"""Group boards: the owner invites collaborators, who pin to the board (and see it though it
be secret) and find it on their profiles; the owner removes them, or they leave."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from pinboard.boards import collaborators
from pinboard.boards.queries import pinnable_board_ids
from pinboard.data_plane import cached_store
from pinboard.users.actions import delete_account
from shardstore import shard_of
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import board_url, get_counted, log_in, text
from toolkit.images import image_upload


@pytest.fixture
def trio(client: Client, make_user: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """ann owns "Trips"; bob and carl are other pinners, carl follows ann."""
    users = {name: make_user(name) for name in ("ann", "bob", "carl")}
    apis = {name: Api.as_pinner(client, user) for name, user in users.items()}
    assert apis["carl"].put(f"/users/{apis['ann'].id}/follow").status_code == 204
    board = apis["ann"].new_board("Trips")
    return {**apis, "users": users, "board": board, "anon": Api(client)}


def invite(w: dict[str, Any], who: str, board: dict[str, Any] | None = None) -> Any:
    """ann invites ``who``, who accepts; the answer to ann's invitation."""
    board = board or w["board"]
    response = w["ann"].put(f"/boards/{board['id']}/collaborators/{w[who].id}")
    if response.status_code == 204:
        accepted = w[who].post(f"/boards/{board['id']}/invitation")
        assert accepted.status_code in (204, 404), accepted.content  # 404: a member already
    return response


def test_a_collaborator_pins_to_the_board_and_finds_it_on_their_profile(
    trio: dict[str, Any],
) -> None:
    ann, bob, carl, board = trio["ann"], trio["bob"], trio["carl"], trio["board"]
    assert error_of(bob.upload({"board_id": board["id"], "image": image_upload()}), 403)
    assert invite(trio, "bob").status_code == 204
    assert invite(trio, "bob").status_code == 204  # again: still one
    members = ann.get(f"/boards/{board['id']}/collaborators").json()["items"]
    assert [m["username"] for m in members] == [trio["users"]["bob"]["username"]]

    pin = bob.new_pin(board["id"], image_upload(), description="bob was here")
    assert pin["board_id"] == board["id"] and pin["owner_id"] == bob.id
    assert error_of(carl.upload({"board_id": board["id"], "image": image_upload()}), 403)
    # the board's followers (carl, through ann) get the collaborator's pin
    assert pin["id"] in [p["id"] for p in carl.get("/feed").json()["items"]]
    assert [b["name"] for b in trio["anon"].get(f"/users/{bob.id}/group-boards").json()["items"]] == ["Trips"]  # fmt: skip
    assert ann.get(f"/boards/{board['id']}").json()["pin_count"] == 1


def test_only_the_owner_invites_and_removes_and_a_collaborator_may_leave(
    trio: dict[str, Any],
) -> None:
    ann, bob, carl, board = trio["ann"], trio["bob"], trio["carl"], trio["board"]
    path = f"/boards/{board['id']}/collaborators"
    invite(trio, "bob")
    assert error_of(bob.put(f"{path}/{carl.id}"), 403)
    assert error_of(bob.delete(f"{path}/{ann.id}"), 403)
    assert error_of(carl.delete(f"{path}/{bob.id}"), 403)
    assert error_of(ann.put(f"{path}/{ann.id}"), 422)
    assert error_of(ann.put(f"{path}/{int(carl.id) + 1}"), 404)
    pin = bob.new_pin(board["id"], image_upload())
    assert bob.delete(f"{path}/{bob.id}").status_code == 204  # bob leaves
    assert ann.get(path).json()["items"] == []
    assert trio["anon"].get(f"/users/{bob.id}/group-boards").json()["items"] == []
    assert error_of(bob.upload({"board_id": board["id"], "image": image_upload()}), 403)
    assert ann.get(f"/pins/{pin['id']}").status_code == 200  # his pins stay
    invite(trio, "carl")
    assert ann.delete(f"{path}/{carl.id}").status_code == 204


def test_a_secret_group_board_shows_to_its_members_alone(trio: dict[str, Any]) -> None:
    ann, bob, carl = trio["ann"], trio["bob"], trio["carl"]
    secret = ann.post("/boards", {"name": "Surprise", "secret": True}).json()
    assert invite(trio, "bob", secret).status_code == 204
    pin = bob.new_pin(secret["id"], image_upload(), description="the cake")
    for api, status in ((ann, 200), (bob, 200), (carl, 404), (trio["anon"], 404)):
        assert api.get(f"/boards/{secret['id']}").status_code == status
        assert api.get(f"/pins/{pin['id']}").status_code == status
        assert api.get(f"/boards/{secret['id']}/collaborators").status_code == status
    for api, names in ((bob, ["Surprise"]), (carl, []), (trio["anon"], [])):
        listed = api.get(f"/users/{bob.id}/group-boards").json()["items"]
        assert [b["name"] for b in listed] == names
    assert pin["id"] not in [p["id"] for p in carl.get("/feed").json()["items"]]
    assert bob.get(f"/users/{bob.id}").json()["pin_count"] == 0  # a secret board's pin


def test_at_most_so_many_collaborators(
    trio: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collaborators, "MAX_COLLABORATORS", 1)
    assert invite(trio, "bob").status_code == 204
    assert error_of(invite(trio, "carl"), 422)["field"] == "user_id"


def test_a_deleted_board_or_account_leaves_no_collaboration(trio: dict[str, Any]) -> None:
    ann, bob, board = trio["ann"], trio["bob"], trio["board"]
    other = ann.new_board("Other")
    invite(trio, "bob")
    invite(trio, "bob", other)
    pin = bob.new_pin(other["id"], image_upload())
    assert ann.delete(f"/boards/{board['id']}").status_code == 204
    listed = trio["anon"].get(f"/users/{bob.id}/group-boards").json()["items"]
    assert [b["name"] for b in listed] == ["Other"]
    delete_account(trio["users"]["bob"]["id"], "plum-orchard-42")  # its purge runs at once
    assert ann.get(f"/boards/{other['id']}/collaborators").json()["items"] == []
    assert ann.get(f"/pins/{pin['id']}").status_code == 404


def test_the_board_page_invites_by_username(client: Client, trio: dict[str, Any]) -> None:
    users, board = trio["users"], trio["board"]
    log_in(client, users["ann"])
    add = f"/boards/{board['id']}/collaborators/"
    page = f"/{users['ann']['username']}/{board['slug']}/"
    response = client.post(add, {"username": "nobody-by-that-name"}, follow=True)
    assert "no pinner has that username" in text(response)
    client.post(add, {"username": users["bob"]["username"]})
    shown = text(client.get(page))
    assert "Invite a pinner" in shown and f"Remove {users['bob']['username']}" in shown
    log_in(client, users["bob"])
    assert "Accept" in text(client.get(page)) and "Add a pin" not in text(client.get(page))
    client.post(f"/boards/{board['id']}/invitation/accept/")
    shown = text(client.get(page))
    assert "Add a pin" in shown and "Leave board" in shown
    assert "Group boards" in text(client.get(f"/{users['bob']['username']}/"))
    client.post(f"/boards/{board['id']}/collaborators/{users['bob']['id']}/remove/")
    assert "Add a pin" not in text(client.get(page))


def test_a_group_boards_page_reads_its_collaborators_in_one_multi_get(
    client: Client, trio: dict[str, Any], make_user: Callable[..., dict[str, Any]]
) -> None:
    ann, board = trio["users"]["ann"], trio["board"]
    page = board_url(ann, board)
    alone, _ = get_counted(client, page)
    friends = [make_user("friend")["id"] for _ in range(3)]  # on shards of their own
    for friend in friends:
        collaborators.invite(ann["id"], int(board["id"]), friend)
        collaborators.accept_invitation(friend, int(board["id"]))
    groups = cached_store().store.read_groups(shard_of(friend) for friend in friends)
    shared, response = get_counted(client, page)
    assert shared == alone + len(groups)  # the collaborators by IN: one statement a group
    assert text(response).count("friend_") >= 3
    warm, _ = get_counted(client, page, warm=True)
    assert warm == 0


def test_a_collaborators_pin_card_links_to_the_board_where_it_lives(
    client: Client, trio: dict[str, Any]
) -> None:
    users, board = trio["users"], trio["board"]
    invite(trio, "bob")
    trio["bob"].new_pin(board["id"], image_upload(), description="from bob")
    by_bob = f'class="credit-pinner" href="/{users["bob"]["username"]}/"'
    to_board = f'class="credit-board" href="{board_url(users["ann"], board)}"'
    for page in (board_url(users["ann"], board), "/"):  # the board, the visitors' grid
        shown = text(client.get(page))
        assert by_bob in shown and to_board in shown, page


def test_a_removed_collaborator_no_longer_edits_their_pins_on_the_board(
    client: Client, trio: dict[str, Any]
) -> None:
    ann, bob, board = trio["ann"], trio["bob"], trio["board"]
    secret = ann.post("/boards", {"name": "Surprise", "secret": True}).json()
    invite(trio, "bob")
    invite(trio, "bob", secret)
    public_pin = bob.new_pin(board["id"], image_upload(), description="bob's")
    secret_pin = bob.new_pin(secret["id"], image_upload(), description="bob's too")
    path = f"/boards/{board['id']}/collaborators/{bob.id}"
    assert ann.delete(path).status_code == 204
    assert ann.delete(f"/boards/{secret['id']}/collaborators/{bob.id}").status_code == 204
    change = {"description": "mine now", "link": "https://attacker.example/"}
    assert error_of(bob.patch(f"/pins/{public_pin['id']}", change), 403)
    assert error_of(bob.patch(f"/pins/{secret_pin['id']}", change), 404)  # he sees it no more
    log_in(client, trio["users"]["bob"])
    assert client.get(f"/pin/{public_pin['id']}/edit/").status_code == 403
    assert client.get(f"/pin/{secret_pin['id']}/edit/").status_code == 404
    for pin in (public_pin, secret_pin):
        assert ann.get(f"/pins/{pin['id']}").json()["link"] == ""


def test_a_pin_moves_only_to_a_board_as_secret_as_its_own(trio: dict[str, Any]) -> None:
    ann, bob = trio["ann"], trio["bob"]
    secret = ann.post("/boards", {"name": "Surprise", "secret": True}).json()
    invite(trio, "bob", secret)
    pin = bob.new_pin(secret["id"], image_upload())
    assert ann.post(f"/pins/{pin['id']}/comments", {"text": "for us alone"}).status_code == 201
    bobs_public = bob.new_board("Bob's")
    bobs_secret = bob.post("/boards", {"name": "Bob's secret", "secret": True}).json()
    for target in (bobs_public, bobs_secret):  # out of ann's secret board: refused
        assert error_of(bob.patch(f"/pins/{pin['id']}", {"board_id": target["id"]}), 403)
    assert ann.get(f"/pins/{pin['id']}").json()["board_id"] == secret["id"]
    assert trio["carl"].get(f"/pins/{pin['id']}").status_code == 404
    mine = ann.new_pin(trio["board"]["id"], image_upload())
    assert error_of(ann.patch(f"/pins/{mine['id']}", {"board_id": secret["id"]}), 403)
    other_secret = ann.post("/boards", {"name": "Quiet", "secret": True}).json()
    moved = ann.patch(f"/pins/{pin['id']}", {"board_id": other_secret["id"]})
    assert error_of(moved, 403)  # not ann's pin: its pinner moves it, or no one
    moved = bob.patch(f"/pins/{pin['id']}", {"board_id": other_secret["id"]})
    assert error_of(moved, 404)  # bob may not see it
    invite(trio, "bob", other_secret)
    moved = bob.patch(f"/pins/{pin['id']}", {"board_id": other_secret["id"]})
    assert moved.status_code == 200 and moved.json()["board_id"] == other_secret["id"]


def test_the_boards_owner_deletes_any_pin_on_it(client: Client, trio: dict[str, Any]) -> None:
    ann, bob, carl, board = trio["ann"], trio["bob"], trio["carl"], trio["board"]
    invite(trio, "bob")
    first = bob.new_pin(board["id"], image_upload())
    second = bob.new_pin(board["id"], image_upload())
    assert error_of(carl.delete(f"/pins/{first['id']}"), 403)
    assert ann.delete(f"/pins/{first['id']}").status_code == 204
    assert ann.get(f"/pins/{first['id']}").status_code == 404
    log_in(client, trio["users"]["ann"])
    page = client.get(f"/pin/{second['id']}/")
    assert f"/pin/{second['id']}/delete/" in text(page)
    assert f"/pin/{second['id']}/edit/" not in text(page)
    assert client.post(f"/pin/{second['id']}/delete/").status_code == 302
    assert ann.get(f"/pins/{second['id']}").status_code == 404
    assert bob.get(f"/users/{bob.id}").json()["pin_count"] == 0


def test_a_deleted_account_loses_its_pins_on_a_secret_board_it_left(trio: dict[str, Any]) -> None:
    ann, bob = trio["ann"], trio["bob"]
    secret = ann.post("/boards", {"name": "Surprise", "secret": True}).json()
    invite(trio, "bob", secret)
    pin = bob.new_pin(secret["id"], image_upload())
    assert bob.delete(f"/boards/{secret['id']}/collaborators/{bob.id}").status_code == 204
    delete_account(trio["users"]["bob"]["id"], "plum-orchard-42")
    assert ann.get(f"/pins/{pin['id']}").status_code == 404


def test_a_pinner_may_pin_to_their_secret_then_public_then_group_boards(
    trio: dict[str, Any],
) -> None:
    bob = trio["bob"]
    assert invite(trio, "bob").status_code == 204
    public = [bob.new_board("Walks"), bob.new_board("Food")]
    made = bob.post("/boards", {"name": "Gifts", "secret": True})
    assert made.status_code == 201, made.content
    secret = made.json()
    expected = [secret["id"], public[1]["id"], public[0]["id"], trio["board"]["id"]]
    assert [str(i) for i in pinnable_board_ids(bob.id, limit=10)] == expected
    assert [str(i) for i in pinnable_board_ids(bob.id, limit=2)] == expected[:2]
