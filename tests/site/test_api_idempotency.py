"""``Idempotency-Key`` on the API's creates: a create sent again with its key makes no
second object and gets the first answer; the key with another request is refused and
writes nothing; keys are each pinner's; a malformed key is a 400. And the hard cases: the
first attempt's object committed though its client saw an error, or its transaction still
open when the retry comes: the retry answers with the first's object."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.test.client import MULTIPART_CONTENT

from pinboard.api.idempotency import fingerprint
from pinboard.data_plane import cached_store
from pinboard.pins.queries import board_pins_page
from shardstore import IdempotencyKey, Topology, shard_of
from tests.site.api_client import BASE, Api, error_of
from toolkit.images import image_upload

HEADER = "Idempotency-Key"


@pytest.fixture
def pinner(client: Client, make_user: Callable[..., dict[str, Any]]) -> Callable[..., Api]:
    """A pinner through the API, on the shard given (so tests can keep pinners apart)."""
    return lambda name, shard=None: Api.as_pinner(client, make_user(name, shard=shard))


@pytest.fixture
def ada(pinner: Callable[..., Api]) -> Api:
    return pinner("ada", 2)


@pytest.fixture
def bea(pinner: Callable[..., Api]) -> Api:
    return pinner("bea", 10)


@pytest.fixture
def beas_pin(bea: Api) -> dict[str, Any]:
    return bea.new_pin(bea.new_board("Tulips")["id"], image_upload(), description="red")


def keyed(api: Api, path: str, body: Any, key: str) -> Any:
    return api.post(path, body, headers={HEADER: key})


def comments_on(api: Api, pin_id: str) -> list[dict[str, Any]]:
    return list(api.get(f"/pins/{pin_id}/comments").json()["items"])


def test_a_comment_sent_again_with_its_key_is_made_once(ada: Api, beas_pin: dict[str, Any]) -> None:
    path = f"/pins/{beas_pin['id']}/comments"
    first = keyed(ada, path, {"text": "lovely"}, "comment-1")
    again = keyed(ada, path, {"text": "lovely"}, "comment-1")
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert [c["id"] for c in comments_on(ada, beas_pin["id"])] == [first.json()["id"]]
    assert ada.get(f"/pins/{beas_pin['id']}").json()["comment_count"] == 1


def test_without_a_key_each_create_makes_an_object(ada: Api, beas_pin: dict[str, Any]) -> None:
    path = f"/pins/{beas_pin['id']}/comments"
    assert ada.post(path, {"text": "twice"}).status_code == 201
    assert ada.post(path, {"text": "twice"}).status_code == 201
    assert len(comments_on(ada, beas_pin["id"])) == 2


def test_a_pin_upload_sent_again_is_made_once(client: Client, ada: Api) -> None:
    board = ada.new_board("Uploads")

    def upload() -> Any:
        fields = {"board_id": board["id"], "image": image_upload(), "description": "once"}
        headers = {**ada.headers(), HEADER: "upload-1"}
        return client.post(BASE + "/pins", fields, content_type=MULTIPART_CONTENT, headers=headers)

    first, again = upload(), upload()
    assert (first.status_code, again.status_code) == (201, 201), again.content
    assert again.json() == first.json()
    assert board_pins_page(int(board["id"])).ids == [int(first.json()["id"])]


def test_a_save_and_a_board_sent_again_are_made_once(ada: Api, beas_pin: dict[str, Any]) -> None:
    made = [keyed(ada, "/boards", {"name": "Saved", "secret": False}, "board-1") for _ in "ab"]
    assert [r.status_code for r in made] == [201, 201]
    board = made[0].json()
    assert made[1].json() == board and board["slug"] == "saved"
    assert [b["id"] for b in ada.get(f"/users/{ada.id}/boards").json()["items"]] == [board["id"]]

    save = f"/pins/{beas_pin['id']}/save"
    saves = [keyed(ada, save, {"board_id": board["id"]}, "save-1") for _ in "ab"]
    assert [r.status_code for r in saves] == [201, 201]
    assert saves[1].json() == saves[0].json()
    assert board_pins_page(int(board["id"])).ids == [int(saves[0].json()["id"])]
    assert ada.get(f"/pins/{beas_pin['id']}").json()["save_count"] == 1


def test_the_key_with_another_body_or_endpoint_is_refused_and_writes_nothing(
    ada: Api, beas_pin: dict[str, Any]
) -> None:
    path = f"/pins/{beas_pin['id']}/comments"
    made = keyed(ada, path, {"text": "first"}, "reused")
    assert made.status_code == 201
    other_body = keyed(ada, path, {"text": "second"}, "reused")
    assert error_of(other_body, 422)["code"] == "idempotency_key_reused"
    boards = ada.get(f"/users/{ada.id}/boards").json()["items"]
    other_endpoint = keyed(ada, "/boards", {"name": "Another"}, "reused")
    assert error_of(other_endpoint, 422)["code"] == "idempotency_key_reused"
    assert [c["id"] for c in comments_on(ada, beas_pin["id"])] == [made.json()["id"]]
    assert ada.get(f"/users/{ada.id}/boards").json()["items"] == boards
    # Refused before anything: even a request refused for its key is not remembered.
    assert keyed(ada, path, {"text": "first"}, "reused").json() == made.json()


def test_pinners_keys_are_their_own(
    ada: Api, bea: Api, pinner: Callable[..., Api], beas_pin: dict[str, Any]
) -> None:
    path = f"/pins/{beas_pin['id']}/comments"
    cy = pinner("cy", 2)  # on ada's shard: their claims share a table
    by_ada = keyed(ada, path, {"text": "same words"}, "shared-key")
    by_cy = keyed(cy, path, {"text": "same words"}, "shared-key")
    by_bea = keyed(bea, path, {"text": "other words"}, "shared-key")
    assert [r.status_code for r in (by_ada, by_cy, by_bea)] == [201, 201, 201]
    authors = [c["author"]["id"] for c in comments_on(ada, beas_pin["id"])]
    assert authors == [ada.id, cy.id, bea.id]


def test_a_malformed_request_is_refused_as_without_a_key(
    ada: Api, beas_pin: dict[str, Any]
) -> None:
    """The request is read before its key: a key sent before does not change why a
    malformed one is refused."""
    board = ada.new_board("Kept")["id"]
    assert keyed(ada, f"/pins/{beas_pin['id']}/save", {"board_id": board}, "k").status_code == 201
    spelled = keyed(ada, f"/pins/0{beas_pin['id']}/save", {"board_id": board}, "k")
    assert error_of(spelled, 404)["code"] == "not_found"
    missing = keyed(ada, f"/pins/{beas_pin['id']}/save", {}, "k")
    assert error_of(missing, 400)["field"] == "board_id"
    foreign = keyed(ada, f"/pins/{beas_pin['id']}/save", {"board_id": beas_pin["id"]}, "k")
    assert error_of(foreign, 404)["field"] == "board_id"


@pytest.mark.parametrize("bad", ["", "x" * 256, "bell\x07", "tab\there", "caf\u00e9"], ids=repr)
def test_a_malformed_key_is_a_400_and_writes_nothing(
    ada: Api, beas_pin: dict[str, Any], bad: str
) -> None:
    response = keyed(ada, f"/pins/{beas_pin['id']}/comments", {"text": "hello"}, bad)
    assert HEADER in error_of(response, 400)["message"]
    assert comments_on(ada, beas_pin["id"]) == []


def test_a_key_where_no_create_takes_one_is_ignored(ada: Api, beas_pin: dict[str, Any]) -> None:
    liked = ada.put(f"/pins/{beas_pin['id']}/like", headers={HEADER: "\x07 never read"})
    assert liked.status_code == 204


def test_the_object_deleted_since_is_a_404(ada: Api, beas_pin: dict[str, Any]) -> None:
    path = f"/pins/{beas_pin['id']}/comments"
    made = keyed(ada, path, {"text": "soon gone"}, "deleted-1").json()
    assert ada.delete(f"{path}/{made['id']}").status_code == 204
    assert error_of(keyed(ada, path, {"text": "soon gone"}, "deleted-1"), 404)
    assert comments_on(ada, beas_pin["id"]) == []


def test_the_openapi_document_names_the_header_on_each_create(client: Client) -> None:
    document = client.get(BASE + "/openapi.json").json()
    keyed_operations = sorted(
        f"{method.upper()} {path}"
        for path, methods in document["paths"].items()
        for method, op in methods.items()
        if any(p["name"] == HEADER for p in op.get("parameters", []))
    )
    assert keyed_operations == [
        "POST /api/v1/boards",
        "POST /api/v1/pins",
        "POST /api/v1/pins/from-url",
        "POST /api/v1/pins/{pin_id}/comments",
        "POST /api/v1/pins/{pin_id}/save",
    ]
    assert "422" in document["paths"]["/api/v1/boards"]["post"]["responses"]


# -- the hard cases ----------------------------------------------------------------------


def key_as_sent(api: Api, path: str, body: Any, key: str) -> IdempotencyKey:
    """The key as an attempt of ``POST path`` with ``body`` writes it."""
    return IdempotencyKey(
        int(api.id),
        key,
        fingerprint("POST", BASE + path, body),
        seconds=settings.IDEMPOTENCY_KEY_SECONDS,
    )


def first_attempts_key(api: Api, path: str, body: Any, key: str) -> IdempotencyKey:
    """The key as the first attempt of ``POST path`` wrote it, claimed as it claimed it."""
    sent = key_as_sent(api, path, body, key)
    assert cached_store().idempotency_keys().claim(sent)
    return sent


def comment_data(api: Api, pin_id: str, text: str) -> dict[str, Any]:
    """The comment object ``add_comment`` writes."""
    assert api.user is not None
    return {
        "pin_id": int(pin_id),
        "author_id": int(api.id),
        "author_username": api.user["username"],
        "text": text,
        "created_at": "2030-01-02T03:04:05.678901+00:00",
    }


def test_a_commit_the_client_saw_fail_is_found_by_the_retry(
    ada: Api, beas_pin: dict[str, Any]
) -> None:
    """The first attempt's comment and key row committed (its commit given up on, then
    landed): nothing listed it, and its client saw a 503. The retry answers with it and
    lists it, and makes no second comment."""
    path, body = f"/pins/{beas_pin['id']}/comments", {"text": "did it go?"}
    sent = first_attempts_key(ada, path, body, "landed-late")
    shard = shard_of(int(beas_pin["id"]))
    first = (
        cached_store()
        .objects("comment")
        .create(shard, comment_data(ada, beas_pin["id"], "did it go?"), key=sent)
    )
    assert comments_on(ada, beas_pin["id"]) == []  # made, not listed

    retry = keyed(ada, path, body, "landed-late")
    assert retry.status_code == 201, retry.content
    assert retry.json()["id"] == str(first)
    assert [c["id"] for c in comments_on(ada, beas_pin["id"])] == [str(first)]
    assert keyed(ada, path, body, "landed-late").json() == retry.json()


def test_a_retry_while_the_first_transaction_is_open_answers_with_its_object(
    ada: Api, beas_pin: dict[str, Any]
) -> None:
    """Two connections: the first attempt's comment and key row are written, uncommitted;
    the retry comes meanwhile (another thread), waits for that transaction, and once it
    commits answers with its comment."""
    path, body = f"/pins/{beas_pin['id']}/comments", {"text": "slow commit"}
    sent = first_attempts_key(ada, path, body, "still-open")
    shard, plain = shard_of(int(beas_pin["id"])), cached_store().store
    answers: list[Any] = []
    retry = threading.Thread(target=lambda: answers.append(keyed(ada, path, body, "still-open")))
    with plain.session(shard, write=True) as session:
        data = comment_data(ada, beas_pin["id"], "slow commit")
        first = plain.objects("comment").insert(session, shard, data, key=sent)
        retry.start()
        time.sleep(0.5)
        assert retry.is_alive(), "the retry went through beside the open first attempt"
    retry.join(20)
    (answer,) = answers
    assert answer.status_code == 201, answer.content
    assert answer.json()["id"] == str(first)
    assert [c["id"] for c in comments_on(ada, beas_pin["id"])] == [str(first)]


@pytest.fixture
def moving(site_store: Any) -> Iterator[Callable[[int], None]]:
    """``moving(shard)`` puts the shard in a read-only window, which writes wait out for
    0.2 s only (then a 503); ``moving(-1)`` ends it."""
    plain = site_store.store
    before, hold = plain.topology, plain.hold_seconds
    plain.hold_seconds = 0.2

    def freeze(shard: int) -> None:
        if shard < 0:
            plain.set_topology(before)
            return
        document = {**before.as_json(), "version": before.version + 1}
        plain.set_topology(Topology.from_json({**document, "read_only": [[shard, shard]]}))

    yield freeze
    plain.set_topology(before)
    plain.hold_seconds = hold


def test_a_save_cut_short_after_its_pin_was_made_is_finished_by_the_retry(
    ada: Api, beas_pin: dict[str, Any], moving: Callable[[int], None]
) -> None:
    """The save's pin is made on ada's shard, then its listing needs bea's, which is
    moving: the client sees a 503. Sent again with its key once the move is over, the save
    lists that pin and answers with it: one pin on the board, one save of the source."""
    board = ada.new_board("Saved for later")
    save = f"/pins/{beas_pin['id']}/save"
    moving(shard_of(int(beas_pin["id"])))
    cut_short = keyed(ada, save, {"board_id": board["id"]}, "save-cut-short")
    assert error_of(cut_short, 503)["code"] == "unavailable"
    assert board_pins_page(int(board["id"])).ids == []
    sent = key_as_sent(ada, save, {"board_id": board["id"]}, "save-cut-short")
    made = cached_store().idempotency_keys().created(shard_of(int(board["id"])), sent)
    assert made is not None  # the pin was made, with its key
    moving(-1)
    retry = keyed(ada, save, {"board_id": board["id"]}, "save-cut-short")
    assert retry.status_code == 201, retry.content
    assert retry.json()["id"] == str(made)
    assert board_pins_page(int(board["id"])).ids == [made]
    assert ada.get(f"/pins/{beas_pin['id']}").json()["save_count"] == 1
    assert keyed(ada, save, {"board_id": board["id"]}, "save-cut-short").json() == retry.json()
