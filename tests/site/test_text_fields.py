"""Text fields refuse NUL and other control characters, on the API and the pages alike.

One-line fields (board names, links, emails) take none; multi-line fields
(descriptions, comments) keep line breaks and tabs and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from pinboard.boards.queries import boards_page
from pinboard.errors import InvalidField
from pinboard.pins.queries import board_pins_page, get_pin, reading_comments
from pinboard.text import multi_line, one_line
from pinboard.users.queries import user_id_for
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text
from toolkit.images import image_upload

#: NUL, BEL, ESC, DEL, a C1 control (NEL) and CSI, the start of terminal escapes.
CONTROLS = ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\x9b"]
LINE_BREAKS = ["\n", "\r", "\t"]
#: Controls that Python's ``str.strip`` takes for whitespace (VT, FF, FS, US, NEL).
STRIPPED_BY_PYTHON = ["\x0b", "\x0c", "\x1c", "\x1f", "\x85"]


@pytest.fixture
def ada(client: Client, make_user: Callable[..., dict[str, Any]]) -> Api:
    return Api.as_pinner(client, make_user("ada"))


@pytest.mark.parametrize("char", [*CONTROLS, "\ud800"])
def test_the_rule_refuses_control_characters_and_lone_surrogates(char: str) -> None:
    for clean in (one_line, multi_line):
        with pytest.raises(InvalidField) as refused:
            clean(f"a{char}b", "name")
        assert refused.value.field == "name"


@pytest.mark.parametrize("char", LINE_BREAKS)
def test_line_breaks_and_tabs_only_in_multi_line_fields(char: str) -> None:
    assert multi_line(f"a{char}b", "about") == f"a{char}b"
    with pytest.raises(InvalidField, match="one line"):
        one_line(f"a{char}b", "name")
    assert one_line("Café ☕ 東京 🍜", "name") == "Café ☕ 東京 🍜"


@pytest.mark.parametrize("char", CONTROLS)
def test_api_refuses_control_characters_in_every_text_field(ada: Api, char: str) -> None:
    assert ada.user is not None
    board = ada.new_board("Clean")
    pin = ada.new_pin(board["id"], image_upload())

    def refused(response: Any, field: str) -> None:
        error = error_of(response, 422)
        assert error["field"] == field and "control characters" in error["message"]

    refused(ada.post("/boards", {"name": f"Bad{char}name"}), "name")
    refused(ada.post("/boards", {"name": "Ok", "description": f"a{char}b"}), "description")
    refused(ada.patch(f"/boards/{board['id']}", {"name": f"x{char}"}), "name")
    refused(ada.patch(f"/boards/{board['id']}", {"description": f"x{char}"}), "description")
    refused(ada.upload({"board_id": board["id"], "image": image_upload(),
                        "description": f"a{char}b"}), "description")  # fmt: skip
    refused(ada.upload({"board_id": board["id"], "image": image_upload(),
                        "link": f"https://example.com/a{char}b"}), "link")  # fmt: skip
    refused(ada.patch(f"/pins/{pin['id']}", {"description": f"x{char}"}), "description")
    refused(ada.patch(f"/pins/{pin['id']}", {"link": f"https://example.com/{char}"}), "link")
    save = {"board_id": board["id"], "description": f"x{char}"}
    refused(ada.post(f"/pins/{pin['id']}/save", save), "description")
    refused(ada.post(f"/pins/{pin['id']}/comments", {"text": f"hi{char}there"}), "text")
    email = f'"a{char}b"@example.com'  # a quoted local part passes the email validator
    signup = {"username": "ctl_user_x", "email": email, "password": "correct horse 9"}
    refused(Api(ada.client).post("/users", signup), "email")
    # Nothing was made or changed.
    assert boards_page(ada.user["id"]).ids == [int(board["id"])]
    assert board_pins_page(int(board["id"])).ids == [int(pin["id"])]
    assert get_pin(int(pin["id"]))["description"] == ""
    assert reading_comments(int(pin["id"])).run().ids == []
    assert user_id_for("username", "ctl_user_x") is None


def test_multi_line_fields_keep_line_breaks_and_tabs(ada: Api) -> None:
    board = ada.new_board("Lines", description="one\ntwo\r\nthree\tfour")
    assert board["description"] == "one\ntwo\r\nthree\tfour"
    pin = ada.new_pin(board["id"], image_upload(), description="a\nb")
    assert pin["description"] == "a\nb"
    comment = ada.post(f"/pins/{pin['id']}/comments", {"text": "first\nsecond"})
    assert comment.status_code == 201 and comment.json()["text"] == "first\nsecond"
    error = error_of(ada.post("/boards", {"name": "Two\nlines"}), 422)
    assert error["field"] == "name" and "one line" in error["message"]


def test_board_and_pin_descriptions_lose_the_whitespace_around_them(ada: Api) -> None:
    board = ada.new_board("Spaced", description="\n  one\ntwo \t")
    assert board["description"] == "one\ntwo"
    edited = ada.patch(f"/boards/{board['id']}", {"description": " three\n"})
    assert edited.json()["description"] == "three"
    pin = ada.new_pin(board["id"], image_upload(), description="\ta\nb  ")
    assert pin["description"] == "a\nb"
    edited = ada.patch(f"/pins/{pin['id']}", {"description": "  c\n"})
    assert edited.json()["description"] == "c"


def test_pages_refuse_control_characters_in_forms(client: Client, cast: dict[str, Any]) -> None:
    ann, pin, board = cast["ann"], cast["pin"], cast["recipes"]
    log_in(client, ann)
    response = client.post("/boards/new/", {"name": "Nul\x00board"})
    assert response.status_code == 422 and "control characters" in text(response)
    response = client.post(f"/boards/{board['id']}/edit/", {"name": "Ok", "description": "\x1b[2J"})
    assert response.status_code == 422 and "control characters" in text(response)
    form = {"board": board["id"], "image": image_upload(), "description": "a\x00b"}
    response = client.post("/pin/new/", form)
    assert response.status_code == 422 and "control characters" in text(response)
    response = client.post(f"/pin/{pin}/comment/", {"text": "bell\x07"}, follow=True)
    assert "control characters" in text(response)
    assert len(boards_page(ann["id"]).ids) == 1
    assert len(board_pins_page(board["id"]).ids) == 2
    assert reading_comments(pin).run().ids == []


@pytest.mark.parametrize("char", STRIPPED_BY_PYTHON)
def test_a_control_character_at_a_fields_edge_is_refused_not_stripped(ada: Api, char: str) -> None:
    assert ada.user is not None
    board = ada.new_board("Edges")
    pin = ada.new_pin(board["id"], image_upload())
    for field, value in (("display_name", char), ("display_name", f"Ada{char}"), ("about", char)):
        error = error_of(ada.patch("/me", {field: value}), 422)
        assert error["field"] == field and "control characters" in error["message"]
    assert error_of(ada.post("/boards", {"name": f"{char}Edge"}), 422)["field"] == "name"
    text_error = error_of(ada.post(f"/pins/{pin['id']}/comments", {"text": f"hi{char}"}), 422)
    assert text_error["field"] == "text"
    me = ada.get("/me").json()
    assert (me["display_name"], me["about"]) == ("", "")  # nothing was changed
    assert boards_page(ada.user["id"]).ids == [int(board["id"])]
