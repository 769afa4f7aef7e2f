"""A Hypothesis walk over the pages: any path ID, cursor or query parameter, any shape of
image uploaded, and no 500.

Every route of the URLconf (the API's left to test_api_fuzz.py) is requested as
a logged-in pinner with generated values for the IDs and names in its path and
for ``cursor``, ``comments``, ``partial`` and ``next``. The test client
re-raises whatever a view lets escape, so a 500 fails the walk; the answers are
also held to what the input deserves: another spelling of a real ID is a 404,
and a cursor shardstore cannot decode is a 400 on a page that reads it.
"""

from __future__ import annotations

import base64
import secrets
from typing import Any
from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pinboard.boards.actions import create_board
from pinboard.image_files import MAX_ASPECT_RATIO
from pinboard.likes.actions import like
from pinboard.pins.actions import add_comment, create_pin
from pinboard.users.actions import sign_up
from shardstore import InvalidCursor, cursors
from tests.site.page_helpers import log_in
from tests.site.test_bad_params import ARABIC_INDIC, CURSOR_PAGES, page_routes
from tests.site.test_image_limits import declared_png, stored_files
from toolkit.images import image_upload

ROUTES = page_routes()
#: Text a URL can carry: anything but lone surrogates, which have no UTF-8 spelling.
URL_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
OTHER_SPELLINGS = ["0{}", "00{}", "+{}", "-{}", " {}", "{} ", "{}\n", "\t{}", "{}.", "{arabic}"]


@pytest.fixture(scope="module")
def walk_cast(site_store: Any) -> dict[str, Any]:
    """A pinner with a board and two pins (one liked and commented on), logged in."""
    n = secrets.token_hex(4)
    ann = sign_up(f"walker_{n}", f"walker_{n}@example.com", "plum-orchard-42")
    bob = sign_up(f"walked_{n}", f"walked_{n}@example.com", "plum-orchard-42")
    board = create_board(ann["id"], "Walked")
    pins = [create_pin(ann["id"], board["id"], image_upload(), f"P{i}") for i in range(2)]
    like(bob["id"], pins[0]["id"])
    add_comment(bob["id"], pins[0]["id"], "hello")
    client = Client()
    log_in(client, ann)
    real = {
        "username": ann["username"],
        "slug": board["slug"],
        "board_id": str(board["id"]),
        "pin_id": str(pins[1]["id"]),
        "user_id": str(bob["id"]),
    }
    return {"client": client, "real": real}


def path_values(real: dict[str, str]) -> st.SearchStrategy[dict[str, tuple[str, bool]]]:
    """For each path parameter: a value, and whether it names the real object exactly."""

    def one(name: str) -> st.SearchStrategy[tuple[str, bool]]:
        value = real[name]
        spelled = st.sampled_from(OTHER_SPELLINGS).map(
            lambda s: (s.format(value, arabic=value.translate(ARABIC_INDIC)), False)
        )
        options = [st.just((value, True)), URL_TEXT.map(lambda t: (t, t == value))]
        if name.endswith("_id"):
            options += [spelled, st.integers(-(2**70), 2**70).map(lambda i: (str(i), False))]
        return st.one_of(options)

    return st.fixed_dictionaries({name: one(name) for name in real})


def cursors_() -> st.SearchStrategy[str | None]:
    well_formed = st.tuples(st.integers(-(2**64), 2**64), st.integers(-1, 2**63)).map(
        lambda t: base64.urlsafe_b64encode(f"{t[0]}:{t[1]}".encode()).decode().rstrip("=")
    )
    return st.one_of(st.none(), URL_TEXT, well_formed)


def decodable(cursor: str | None) -> bool:
    if not cursor:  # absent or empty: the first page
        return True
    try:
        cursors.decode(cursor)
    except InvalidCursor:
        return False
    return True


@given(
    data=st.data(),
    route=st.sampled_from(ROUTES),
    cursor=cursors_(),
    comments=cursors_(),
    partial=st.sampled_from([None, "1", "", "yes\x00"]),
    method=st.sampled_from(["get", "post"]),
)
@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_page_input_gives_a_500(
    walk_cast: dict[str, Any],
    data: st.DataObject,
    route: tuple[str, str],
    cursor: str | None,
    comments: str | None,
    partial: str | None,
    method: str,
) -> None:
    template, name = route
    values = data.draw(path_values(walk_cast["real"]))
    used = [key for key in values if f"<str:{key}>" in template]
    if method == "post" and all(values[key][1] for key in used):
        return  # a real button press (delete, follow...) would change the walk's own data
    url = "/" + template
    for key in used:
        url = url.replace(f"<str:{key}>", quote(values[key][0], safe=""))
    query = {
        k: v
        for k, v in {"cursor": cursor, "comments": comments, "partial": partial}.items()
        if v is not None
    }
    client: Client = walk_cast["client"]
    if method == "get":
        response = client.get(url, query)
    else:
        response = client.post(url + "?" + "&".join(f"{k}={quote(v)}" for k, v in query.items()))
    status = response.status_code
    event(f"{method.upper()} {name or template}: {status}")  # see --hypothesis-show-statistics
    assert status in (200, 302, 400, 403, 404, 405), (method, url, query, status)
    if any(not values[key][1] for key in used if key.endswith("_id")):
        assert status in (404, 405), (method, url, status)  # never another object's page
    elif method == "get" and all(values[key][1] for key in used):
        reads = cursor if name in CURSOR_PAGES else comments if name == "pin" else None
        if not decodable(reads):
            assert status == 400, (url, query, status)


@pytest.fixture(scope="module")
def upload_cast(site_store: Any) -> dict[str, Any]:
    """A pinner of their own, logged in, with a board to pin the walk's images to."""
    n = secrets.token_hex(4)
    pinner = sign_up(f"uploader_{n}", f"uploader_{n}@example.com", "plum-orchard-42")
    board = create_board(pinner["id"], "Uploaded")
    client = Client()
    log_in(client, pinner)
    return {"client": client, "board": str(board["id"])}


def image_sizes() -> st.SearchStrategy[tuple[int, int]]:
    """Any shape up to 100,000 px a side: ordinary pictures, and strips of every length
    (narrow enough to stay cheap to decode when they pass)."""
    ordinary = st.tuples(st.integers(1, 1000), st.integers(1, 1000))
    strip = st.tuples(st.integers(1, 40), st.integers(1, 100_000))
    return st.one_of(ordinary, strip, strip.map(lambda s: (s[1], s[0])))


@given(size=image_sizes(), form=st.sampled_from(["/pin/new/", "/settings/avatar/"]))
@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_image_shape_gives_a_500_or_leaves_files(
    upload_cast: dict[str, Any], size: tuple[int, int], form: str
) -> None:
    width, height = size
    before = stored_files()
    image = SimpleUploadedFile("any.png", declared_png(width, height), content_type="image/png")
    response = upload_cast["client"].post(form, {"board": upload_cast["board"], "image": image})
    status = response.status_code
    event(f"{form} {'long' if max(size) > 20 * min(size) else 'fits'}: {status}")
    assert status in (302, 422), (form, size, status)
    assert (status == 422) == (max(size) > MAX_ASPECT_RATIO * min(size)), (form, size, status)
    if status == 422:
        assert stored_files() == before
