"""Fetching the image to pin from a URL (pinboard/pins/fetch.py) against a real web server on
loopback (toolkit/web_pages.py), which these calls allow; everything else about addresses
is as in production."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from pinboard.errors import CouldNotFetch
from pinboard.image_files import MAX_BYTES
from pinboard.pins.fetch import (
    MAX_PAGE_BYTES,
    MAX_REDIRECTS,
    AddressNotAllowed,
    FetchedImage,
    fetch_image,
)
from toolkit.images import image_bytes, numbered_png
from toolkit.processes import free_port
from toolkit.web_pages import Route, WebPages

PNG = "image/png"
SMALL, LARGE = numbered_png(1, (40, 30)), numbered_png(2, (120, 90))


@pytest.fixture
def web() -> Iterator[WebPages]:
    with WebPages() as pages:
        pages.routes["/small.png"] = Route(SMALL, PNG)
        pages.routes["/large.png"] = Route(LARGE, PNG)
        yield pages


def fetch(url: object, seconds: float = 5, **options: object) -> FetchedImage:
    return fetch_image(url, seconds=seconds, allow_loopback=True, **options)  # type: ignore[arg-type]


def refusal(url: object, seconds: float = 5, **options: object) -> str:
    """Why the fetch was refused: its message, or for an address, the reason it logs (the
    pinner is told only that the address is not allowed)."""
    with pytest.raises(CouldNotFetch) as refused:
        fetch(url, seconds, **options)
    assert refused.value.message.startswith("could not fetch the image: ")
    assert refused.value.field == "source_url"
    if isinstance(refused.value, AddressNotAllowed):
        assert refused.value.message == NOT_ALLOWED
        return refused.value.why
    return refused.value.message.removeprefix("could not fetch the image: ")


NOT_ALLOWED = "could not fetch the image: the address is not allowed"


def test_an_image_url_gives_its_bytes(web: WebPages) -> None:
    fetched = fetch(web.url("/large.png"))
    assert fetched == FetchedImage(LARGE, web.url("/large.png"))
    assert [seen.path for seen in web.seen] == ["/large.png"]


def test_a_url_with_other_characters_is_sent_percent_encoded(web: WebPages) -> None:
    web.routes["/caf%C3%A9.png?size=large&q=%C3%A9"] = Route(LARGE, PNG)
    assert fetch(web.url("/café.png?size=large&q=é")).data == LARGE


def test_https_is_spoken_to_the_checked_address(web: WebPages) -> None:
    # The server speaks plain HTTP: the TLS handshake fails, cleanly.
    assert refusal(web.url("/small.png").replace("http:", "https:")) == (
        "the secure connection failed"
    )
    assert web.seen == []


def test_a_page_gives_its_og_image_resolved_against_the_page(web: WebPages) -> None:
    web.routes["/recipes/tart.html"] = Route(
        b'<html><head><meta property="og:image" content="../small.png"></head>'
        b'<body><img src="/large.png" width="900" height="900"></body></html>'
    )
    fetched = fetch(web.url("/recipes/tart.html"))
    assert fetched == FetchedImage(SMALL, web.url("/recipes/tart.html"))
    assert [seen.path for seen in web.seen] == ["/recipes/tart.html", "/small.png"]


def test_a_page_with_only_imgs_gives_the_largest_declared(web: WebPages) -> None:
    web.routes["/gallery"] = Route(
        b'<img src="small.png" width="40" height="30"><img src="large.png" width="120" height="90">'
    )
    assert fetch(web.url("/gallery")).data == LARGE
    web.routes["/undeclared"] = Route(b'<img src="small.png"><img src="large.png">')
    assert fetch(web.url("/undeclared")).data == SMALL  # none declared: the first


def test_a_page_without_an_image_or_whose_image_is_a_page_is_refused(web: WebPages) -> None:
    web.routes["/text"] = Route(b"<p>Only words.</p>")
    assert refusal(web.url("/text")) == "the page names no image (no og:image, twitter:image or <img>)"  # fmt: skip
    web.routes["/loop"] = Route(b'<meta property="og:image" content="/text">')
    assert "is a web page" in refusal(web.url("/loop"))


def test_redirects_are_followed_and_the_page_is_where_they_led(web: WebPages) -> None:
    web.routes["/short"] = Route(status=301, headers={"Location": "/moved/page"})
    web.routes["/moved/page"] = Route(b'<meta name="twitter:image" content="../small.png">')
    assert fetch(web.url("/short")) == FetchedImage(SMALL, web.url("/moved/page"))


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("http://10.1.2.3/inside", "10.1.2.3 is a private address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://[::ffff:192.168.0.1]/", "::ffff:192.168.0.1 is a private address"),
        ("http://0.0.0.0:1/", "0.0.0.0 is an unspecified address"),
        ("ftp://127.0.0.1/a.png", "only http and https URLs can be fetched"),
    ],
)
def test_a_redirect_to_a_private_address_is_refused_before_connecting(
    web: WebPages, location: str, why: str
) -> None:
    web.routes["/away"] = Route(status=302, headers={"Location": location})
    started = time.monotonic()
    assert refusal(web.url("/away"), seconds=5) == why
    assert time.monotonic() - started < 2  # refused at once, not after a connection attempt


def test_redirects_are_bounded(web: WebPages) -> None:
    web.routes["/again"] = Route(status=307, headers={"Location": "/again"})
    assert refusal(web.url("/again")) == f"more than {MAX_REDIRECTS} redirects"
    assert len(web.seen) == MAX_REDIRECTS + 1
    web.routes["/nowhere"] = Route(status=302)
    assert refusal(web.url("/nowhere")) == "the server answered 302 with no Location"


def test_loopback_is_refused_unless_allowed_and_nothing_is_requested(web: WebPages) -> None:
    for url in (web.url("/small.png"), web.url("/small.png", host="localhost")):
        with pytest.raises(AddressNotAllowed, match=NOT_ALLOWED) as refused:
            fetch_image(url, seconds=5)
        assert refused.value.why.endswith("is a loopback address")
    assert web.seen == []


def test_the_connection_goes_to_the_checked_address_resolved_once(web: WebPages) -> None:
    """A rebinding DNS server answers a public address to the check and a private one to the
    connection; here the name is resolved once per request, and that answer is connected to."""
    answers = iter([["127.0.0.1"], ["10.9.9.9"], ["10.9.9.9"]])
    asked: list[tuple[str, int]] = []

    def rebinding(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return next(answers)

    fetched = fetch(f"http://pictures.example:{web.port}/small.png", resolver=rebinding)
    assert fetched.data == SMALL
    assert asked == [("pictures.example", web.port)]
    assert web.seen[0].host == f"pictures.example:{web.port}"  # the name, not the address
    # Every answer is checked: one private address among them refuses the host.
    why = refusal(
        f"http://pictures.example:{web.port}/small.png",
        resolver=lambda host, port: ["127.0.0.1", "192.168.7.7"],
    )
    assert why == "pictures.example resolves to 192.168.7.7, which is a private address"


def test_a_host_that_resolves_to_several_addresses_is_reached_on_one_that_answers(
    web: WebPages,
) -> None:
    closed = free_port()
    two = ["::1", "127.0.0.1"]  # nothing listens on ::1 at the server's port
    assert fetch(web.url("/small.png", host="localhost"), resolver=lambda h, p: two).data == SMALL
    assert refusal(f"http://127.0.0.1:{closed}/") == "the server refused the connection"


def test_an_image_over_the_limit_is_refused_declared_or_streamed(web: WebPages) -> None:
    huge = b"\x89PNG" + bytes(MAX_BYTES)
    web.routes["/declared.png"] = Route(huge, PNG)
    web.routes["/streamed.png"] = Route(huge, PNG, declare_length=False)
    for path in ("/declared.png", "/streamed.png"):
        assert refusal(web.url(path)) == "images must be at most 10 MB"
    web.routes["/exact.png"] = Route(huge[:MAX_BYTES], PNG, declare_length=False)
    assert len(fetch(web.url("/exact.png")).data) == MAX_BYTES


def test_a_long_page_is_read_up_to_its_cap(web: WebPages) -> None:
    head = b'<meta property="og:image" content="/small.png">'
    padding = b"<p>" + b"x" * MAX_PAGE_BYTES + b"</p>"
    web.routes["/long"] = Route(head + padding, declare_length=False)
    assert fetch(web.url("/long")).data == SMALL
    web.routes["/late"] = Route(padding + head)  # named past the cap: not seen
    assert "names no image" in refusal(web.url("/late"))


@pytest.mark.parametrize(
    "route",
    [
        Route(image_bytes(), PNG, delay=3),  # no answer in time
        Route(image_bytes(), PNG, trickle=0.05),  # each byte in time, the whole far too late
    ],
    ids=["silent", "trickling"],
)
def test_a_slow_server_is_cut_off_at_the_deadline(web: WebPages, route: Route) -> None:
    web.routes["/slow.png"] = route
    started = time.monotonic()
    assert refusal(web.url("/slow.png"), seconds=1) == "it took longer than 1 second"
    assert time.monotonic() - started < 1.5


def test_a_server_error_or_a_missing_image_is_refused(web: WebPages) -> None:
    assert refusal(web.url("/missing.png")) == "the server answered 404 Not Found"
    web.routes["/broken"] = Route(b"oops", status=500)
    assert refusal(web.url("/broken")) == "the server answered 500 Internal Server Error"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://127.0.0.1/a.png", "only http and https URLs can be fetched"),
        ("file:///etc/passwd", "only http and https URLs can be fetched"),
        ("javascript:alert(1)", "only http and https URLs can be fetched"),
        ("just some words", "the URL holds spaces or control characters"),
        ("http://exa\nmple.com/", "the URL holds spaces or control characters"),
        ("example.com/a.png", "only http and https URLs can be fetched"),
        ("http://", "the URL names no host"),
        ("http://[::1/", "this is not a URL"),
        ("http://127.0.0.1:99999/", "this is not a URL"),
        ("http://user:secret@127.0.0.1/", "URLs with a user name or password are not fetched"),
        ("http://a..b/", "the URL's host name is not valid"),
        ("http://no-such-host.invalid/", "the host no-such-host.invalid could not be found"),
        ("http://" + "a" * 2050 + ".com/", "URLs must be at most 2048 characters"),
        ("", "a URL is required"),
        (12, "a URL is required"),
        (None, "a URL is required"),
    ],
)
def test_garbage_urls_are_refused(url: object, why: str) -> None:
    assert refusal(url) == why


def test_an_address_spelled_otherwise_is_checked_once_resolved() -> None:
    for spelling in ("http://2130706433/", "http://0x7f.1/", "http://127.1/"):
        with pytest.raises(AddressNotAllowed, match=NOT_ALLOWED) as refused:
            fetch_image(spelling, seconds=5)
        assert "resolves to 127.0.0.1, which is a loopback" in refused.value.why


def test_a_resolver_that_fails_means_the_host_could_not_be_found() -> None:
    def unresolvable(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    assert refusal("https://example.com/", resolver=unresolvable) == (
        "the host example.com could not be found"
    )
