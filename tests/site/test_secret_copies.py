"""What leaves a secret board: an invitee who has not accepted sees the board, to decide, and
nothing more (no save, like, comment or follow); a member saves its pins only where its
owner decides who sees them (``social.rules.may_copy_to``), by the pages and the API alike;
and no one pins its images from their addresses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from pinboard.errors import CouldNotFetch
from pinboard.image_files import read
from pinboard.pins.fetch import fetch_image
from pinboard.pins.queries import board_pins_page, get_pin
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload
from toolkit.web_pages import Route, WebPages


@pytest.fixture
def world(client: Client, make_user: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """ann's secret board "Diary" with a pin, and her secret board "Quiet"; bob is invited
    to Diary (not yet accepted) and owns a public and a secret board; carl is a stranger."""
    users = {name: make_user(name) for name in ("ann", "bob", "carl")}
    ann, bob, carl = (Api.as_pinner(client, users[n]) for n in ("ann", "bob", "carl"))
    diary = ann.post("/boards", {"name": "Diary", "secret": True}).json()
    quiet = ann.post("/boards", {"name": "Quiet", "secret": True}).json()
    pin = ann.new_pin(diary["id"], image_upload(size=(600, 400)), description="dear diary")
    assert ann.put(f"/boards/{diary['id']}/collaborators/{bob.id}").status_code == 204
    return {
        "ann": ann,
        "bob": bob,
        "carl": carl,
        "anon": Api(client),
        "users": users,
        "diary": diary,
        "quiet": quiet,
        "pin": pin,
        "bobs_public": bob.new_board("Bob's"),
        "bobs_secret": bob.post("/boards", {"name": "Bob's secret", "secret": True}).json(),
    }


def accept(w: dict[str, Any], board: dict[str, Any]) -> None:
    """bob joins ``board`` (invited first, if he is not yet: inviting again changes nothing)."""
    assert w["ann"].put(f"/boards/{board['id']}/collaborators/{w['bob'].id}").status_code == 204
    assert w["bob"].post(f"/boards/{board['id']}/invitation").status_code == 204


def pins_on(board: dict[str, Any]) -> list[int]:
    return board_pins_page(int(board["id"])).ids


def untouched(w: dict[str, Any]) -> None:
    """Nothing the refused calls could have changed has changed."""
    pin = w["ann"].get(f"/pins/{w['pin']['id']}").json()
    assert (pin["like_count"], pin["save_count"], pin["comment_count"]) == (0, 0, 0)
    assert pins_on(w["bobs_public"]) == [] and pins_on(w["bobs_secret"]) == []
    board = w["ann"].get(f"/boards/{w['diary']['id']}").json()
    assert (board["pin_count"], board["follower_count"]) == (1, 0)
    kinds = {n["kind"] for n in w["ann"].get("/notifications").json()["items"]}
    assert kinds.isdisjoint({"like", "save", "comment", "board_follow"})


def test_an_invitee_sees_the_board_and_does_nothing_else_by_the_api(world: dict[str, Any]) -> None:
    bob, board, pin = world["bob"], world["diary"]["id"], world["pin"]["id"]
    assert bob.get(f"/boards/{board}").status_code == 200  # to decide
    assert bob.get(f"/pins/{pin}").status_code == 200
    for method, path, body in [
        ("PUT", f"/pins/{pin}/like", None),
        ("POST", f"/pins/{pin}/comments", {"text": "let me in"}),
        ("POST", f"/pins/{pin}/save", {"board_id": world["bobs_public"]["id"]}),
        ("POST", f"/pins/{pin}/save", {"board_id": world["bobs_secret"]["id"]}),
        ("PUT", f"/boards/{board}/follow", None),
    ]:
        error = error_of(bob.call(method, path, body), 403)
        assert "accept" in error["message"], (method, path)
    untouched(world)
    accept(world, world["diary"])  # a member now: he likes and comments
    assert bob.put(f"/pins/{pin}/like").status_code == 204
    assert bob.post(f"/pins/{pin}/comments", {"text": "in"}).status_code == 201


def test_an_invitee_is_offered_nothing_and_refused_everything_by_the_pages(
    client: Client, world: dict[str, Any]
) -> None:
    users, pin = world["users"], world["pin"]["id"]
    log_in(client, users["bob"])
    page = text(client.get(f"/pin/{pin}/"))
    assert "dear diary" in page
    assert "Like</button>" not in page and 'class="save-form"' not in page
    assert 'class="comment-form"' not in page and "accept" in page.lower()
    board = {"board": world["bobs_public"]["id"]}
    assert client.post(f"/pin/{pin}/like/").status_code == 403
    assert client.post(f"/pin/{pin}/comment/", {"text": "let me in"}).status_code == 403
    assert client.post(f"/boards/{world['diary']['id']}/follow/").status_code == 403
    saved = client.post(f"/pin/{pin}/save/", board, follow=True)
    assert "accept" in text(saved).lower()
    untouched(world)


def test_a_member_saves_a_secret_pin_only_to_its_owners_secret_boards(
    world: dict[str, Any],
) -> None:
    ann, bob, pin = world["ann"], world["bob"], world["pin"]["id"]
    accept(world, world["diary"])
    for target in (world["bobs_public"], world["bobs_secret"]):  # his: he may make it public
        error = error_of(bob.post(f"/pins/{pin}/save", {"board_id": target["id"]}), 403)
        assert "secret boards" in error["message"]
    untouched(world)
    accept(world, world["quiet"])
    saved = bob.post(f"/pins/{pin}/save", {"board_id": world["quiet"]["id"]})
    assert saved.status_code == 201, saved.content
    copy = saved.json()["id"]
    for api, status in ((ann, 200), (bob, 200), (world["carl"], 404), (world["anon"], 404)):
        assert api.get(f"/pins/{copy}").status_code == status
    # The invitation withdrawn, the copy is out of his reach and in its owner's.
    assert ann.delete(f"/boards/{world['quiet']['id']}/collaborators/{bob.id}").status_code == 204
    assert error_of(bob.get(f"/pins/{copy}"), 404)
    assert ann.delete(f"/pins/{copy}").status_code == 204
    # The board's owner, who may make the board public anyway, saves anywhere.
    garden = ann.new_board("Garden")
    assert ann.post(f"/pins/{pin}/save", {"board_id": garden["id"]}).status_code == 201


def test_the_pages_offer_and_make_only_the_saves_the_rule_allows(
    client: Client, world: dict[str, Any]
) -> None:
    accept(world, world["diary"])
    accept(world, world["quiet"])
    log_in(client, world["users"]["bob"])
    pin = world["pin"]["id"]
    page = text(client.get(f"/pin/{pin}/"))
    offered = page.split('class="save-form"', 1)[1].split("</form>", 1)[0]
    assert "Quiet" in offered and "Diary" in offered and "Bob" not in offered
    refused = client.post(f"/pin/{pin}/save/", {"board": world["bobs_public"]["id"]}, follow=True)
    assert "secret boards" in text(refused)
    untouched(world)
    client.post(f"/pin/{pin}/save/", {"board": world["quiet"]["id"]})
    assert len(pins_on(world["quiet"])) == 1


@pytest.fixture
def web(settings: Any) -> Iterator[WebPages]:
    settings.PIN_FETCH_ALLOW_LOOPBACK = True
    settings.PIN_FETCH_SECONDS = 2
    with WebPages() as pages:
        yield pages


def signed_path(world: dict[str, Any]) -> tuple[str, bytes]:
    """The path of the secret pin's image as a URL signed by S3 gives it, and its bytes."""
    stored = get_pin(int(world["pin"]["id"]))
    assert stored is not None
    key = stored["image"]["key"]
    assert key.startswith("private/")
    return f"/pinboard-media/{key}?X-Amz-Expires=300&X-Amz-Signature=0f1e", read(key)


def test_no_one_pins_a_secret_boards_image_from_its_address(
    world: dict[str, Any], web: WebPages
) -> None:
    path, data = signed_path(world)
    web.routes[path] = Route(data, "image/jpeg")
    web.routes["/short"] = Route(status=302, headers={"Location": path})
    web.routes["/dotted"] = Route(status=302, headers={"Location": path.replace("/private/", "/private/./", 1)})  # fmt: skip
    web.routes["/page.html"] = Route(f'<meta property="og:image" content="{path}">'.encode())
    accept(world, world["diary"])
    for who in ("bob", "carl", "ann"):  # a member, a stranger, the owner
        target = world[who].new_board("From the web")
        for url in ("", "/short", "/dotted", "/page.html"):
            answer = world[who].post(
                "/pins/from-url", {"board_id": target["id"], "source_url": web.url(url or path)}
            )
            error = error_of(answer, 400)
            assert error["code"] == "could_not_fetch" and "private" in error["message"], url
        assert pins_on(target) == []
    assert all("/private/" not in seen.path for seen in web.seen)  # never even asked
    untouched(world)


@pytest.mark.parametrize(
    "spelled",
    [
        "https://media.example/private/pins/ab/{name}.jpg",
        "https://media.example/%70rivate/pins/ab/{name}_236.jpg",
        "https://media.example/private/pins/../pins/ab/{name}.jpg",
        "https://media.example/private//pins/ab/{name}.jpg",
        "https://proxy.example/?url=https%253A%252F%252Fb.s3.amazonaws.com%252Fprivate%252Fpins%252Fab%252F{name}.jpg",
    ],
)
def test_a_private_images_address_is_refused_before_any_lookup(spelled: str) -> None:
    def resolver(host: str, port: int) -> list[str]:
        raise AssertionError(f"{host} looked up")

    url = spelled.format(name="ab" + "0123456789abcdef" * 2)  # a private file's random name
    with pytest.raises(CouldNotFetch, match="private"):
        fetch_image(url, seconds=1, resolver=resolver)
