"""Pin from a URL: ``POST /api/v1/pins/from-url`` and the new-pin form's URL field, with the
pages and images served by a real web server on loopback (allowed here by the setting,
except where a test shows that it is refused without it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from pinboard.image_files import MAX_PIXELS
from pinboard.pins.queries import board_pins_page, get_pin
from pinboard.settings import base
from tests.site.api_client import Api, error_of
from tests.site.page_helpers import log_in, text
from tests.site.test_image_limits import declared_png
from toolkit.images import image_upload, numbered_png
from toolkit.web_pages import Route, WebPages

PHOTO = numbered_png(3, (320, 240))
PAGE = b"""<!doctype html><html><head><title>Lemon tart</title>
<meta property="og:image" content="/photo.png"></head>
<body><img src="/other.png" width="900" height="900"></body></html>"""


@pytest.fixture
def web(settings: Any) -> Iterator[WebPages]:
    settings.PIN_FETCH_ALLOW_LOOPBACK = True
    settings.PIN_FETCH_SECONDS = 2
    with WebPages() as pages:
        pages.routes["/photo.png"] = Route(PHOTO, "image/png")
        pages.routes["/tart.html"] = Route(PAGE)
        yield pages


@pytest.fixture
def ada(client: Client, make_user: Callable[..., dict[str, Any]]) -> Api:
    return Api.as_pinner(client, make_user("ada"))


@pytest.fixture
def board(ada: Api) -> dict[str, Any]:
    return ada.new_board("From the web")


def pin_from(api: Api, board: dict[str, Any], source_url: object, **fields: Any) -> Any:
    return api.post("/pins/from-url", {"board_id": board["id"], "source_url": source_url, **fields})


def pins_on(board: dict[str, Any]) -> list[int]:
    return board_pins_page(int(board["id"])).ids


def test_pin_an_image_url(ada: Api, board: dict[str, Any], web: WebPages) -> None:
    response = pin_from(ada, board, web.url("/photo.png"), description="Tart")
    assert response.status_code == 201, response.content
    pin = response.json()
    assert (pin["width"], pin["height"]) == (320, 240)
    assert pin["image_url"].endswith(".jpg")  # re-encoded, as an upload is
    assert (pin["description"], pin["link"]) == ("Tart", web.url("/photo.png"))
    assert pins_on(board) == [int(pin["id"])]


def test_pin_a_page_keeps_the_page_as_its_link_unless_given_one(
    ada: Api, board: dict[str, Any], web: WebPages
) -> None:
    pin = pin_from(ada, board, web.url("/tart.html")).json()
    assert pin["link"] == web.url("/tart.html")
    assert (pin["width"], pin["height"]) == (320, 240)  # the og:image, not the larger <img>
    assert [seen.path for seen in web.seen] == ["/tart.html", "/photo.png"]
    given = pin_from(ada, board, web.url("/tart.html"), link="https://example.com/tart").json()
    assert given["link"] == "https://example.com/tart"
    assert get_pin(int(given["id"]))["link"] == "https://example.com/tart"


@pytest.mark.parametrize(
    ("route", "why"),
    [
        (Route(b"plain words", "text/plain"), "the file is not a JPEG, PNG, GIF or WebP image"),
        (Route(declared_png(6000, 6000), "image/png"), f"at most {MAX_PIXELS // 10**6} megapixels"),
        (Route(b"", status=404), "the server answered 404 Not Found"),
        (Route(status=302, headers={"Location": "http://192.168.1.1/"}), "address is not allowed"),
        (Route(PHOTO, "image/png", delay=4), "it took longer than 2 seconds"),
        (Route(declared_png(1, 100_000), "image/png"), "at most 20 times as long"),
        (Route(declared_png(100_000, 1), "image/png"), "at most 20 times as long"),
    ],
    ids=[
        *("not-an-image", "too-many-pixels", "missing", "redirect-to-private", "too-slow"),
        *("too-tall", "too-wide"),
    ],
)
def test_what_cannot_be_pinned_is_a_400_and_creates_nothing(
    ada: Api, board: dict[str, Any], web: WebPages, route: Route, why: str
) -> None:
    web.routes["/thing"] = route
    error = error_of(pin_from(ada, board, web.url("/thing")), 400)
    assert (error["code"], error["field"]) == ("could_not_fetch", "source_url")
    assert error["message"].startswith("could not fetch the image: ") and why in error["message"]
    assert pins_on(board) == []


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1/a.png", "not a url", "http://", "", 42, None, ["http://x/"]]
)
def test_a_url_that_is_no_http_url_is_a_400(ada: Api, board: dict[str, Any], url: object) -> None:
    error = error_of(pin_from(ada, board, url), 400)
    assert error["code"] == "could_not_fetch"
    assert pins_on(board) == []


def test_loopback_is_refused_when_the_setting_is_off(
    ada: Api, board: dict[str, Any], web: WebPages, settings: Any
) -> None:
    settings.PIN_FETCH_ALLOW_LOOPBACK = False
    for host in ("127.0.0.1", "localhost"):  # never what a name resolves to, nor its kind
        error = error_of(pin_from(ada, board, web.url("/photo.png", host=host)), 400)
        assert error["message"] == "could not fetch the image: the address is not allowed"
    assert web.seen == []  # refused before any connection
    assert pins_on(board) == []


def test_the_setting_is_off_by_default() -> None:
    assert base.PIN_FETCH_ALLOW_LOOPBACK is False


def test_nothing_is_fetched_for_a_request_refused_otherwise(
    client: Client, ada: Api, board: dict[str, Any], web: WebPages, make_user: Any
) -> None:
    url = web.url("/photo.png")
    bob = Api.as_pinner(client, make_user("bob"))
    assert error_of(pin_from(bob, board, url), 403)["code"] == "forbidden"
    assert error_of(pin_from(Api(client), board, url), 401)["code"] == "unauthenticated"
    assert error_of(pin_from(ada, board, url, link="javascript:x"), 422)["field"] == "link"
    missing = ada.post("/pins/from-url", {"board_id": board["id"]})
    assert error_of(missing, 400)["field"] == "source_url"
    assert error_of(ada.post("/pins/from-url", {"source_url": url}), 400)["field"] == "board_id"
    as_form = ada.post("/pins/from-url", data={"source_url": url}, content_type="text/plain")
    assert error_of(as_form, 400)["code"] == "bad_request"
    assert error_of(ada.get("/pins/from-url"), 405)["code"] == "method_not_allowed"
    assert web.seen == []
    assert pins_on(board) == []


def test_the_endpoint_is_in_the_openapi_document(client: Client) -> None:
    document = client.get("/api/v1/openapi.json").json()
    operation = document["paths"]["/api/v1/pins/from-url"]["post"]
    assert set(operation["responses"]) == {"201", "400", "401", "403", "404", "413", "422", "429", "503"}  # fmt: skip
    body = document["components"]["schemas"]["PinFromUrl"]
    assert body["required"] == ["board_id", "source_url"]
    assert body["properties"]["source_url"]["maxLength"] == 2048
    assert "could not be fetched" in document["components"]["responses"]["E400"]["description"]


# -- the new-pin page ----------------------------------------------------------------


def test_the_form_pins_a_pasted_page_url(
    client: Client, cast: dict[str, Any], web: WebPages
) -> None:
    log_in(client, cast["ann"])
    assert 'name="source_url"' in text(client.get("/pin/new/"))
    form = {"board": cast["recipes"]["id"], "source_url": f"  {web.url('/tart.html')} "}
    response = client.post("/pin/new/", {**form, "description": "From the web"})
    assert response.status_code == 302, text(response)
    pin = get_pin(int(response["Location"].split("/")[2]))
    assert (pin["description"], pin["link"]) == ("From the web", web.url("/tart.html"))
    assert (pin["image"]["width"], pin["image"]["height"]) == (320, 240)


@pytest.mark.parametrize(
    ("source_url", "message"),
    [
        ("ftp://example.com/a.png", "only http and https URLs can be fetched"),
        ("/photo.png", "only http and https URLs can be fetched"),
        ("SERVER/nothing", "the server answered 404 Not Found"),
    ],
)
def test_the_form_shows_why_a_url_could_not_be_pinned(
    client: Client, cast: dict[str, Any], web: WebPages, source_url: str, message: str
) -> None:
    log_in(client, cast["ann"])
    source_url = source_url.replace("SERVER", web.url("").removesuffix("/"))
    response = client.post("/pin/new/", {"board": cast["recipes"]["id"], "source_url": source_url})
    assert response.status_code == 400
    page = text(response)
    assert f'<p class="field-error">could not fetch the image: {message}</p>' in page
    assert f'value="{source_url}"' in page  # kept for another try
    assert len(pins_on(cast["recipes"])) == 2


def test_the_form_takes_a_file_or_a_url_not_both(
    client: Client, cast: dict[str, Any], web: WebPages
) -> None:
    log_in(client, cast["ann"])
    form = {"board": cast["recipes"]["id"], "image": image_upload(), "source_url": web.url("/")}
    response = client.post("/pin/new/", form)
    assert response.status_code == 422
    assert '<p class="field-error">choose a file or paste a URL, not both</p>' in text(response)
    assert web.seen == [] and len(pins_on(cast["recipes"])) == 2
