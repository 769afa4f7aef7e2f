"""Pins from a URL, the decisions made before and after the network: which addresses may be
fetched from (public_addresses.py) and which image a page offers (page_image.py)."""

from __future__ import annotations

import pytest

from pinboard.pins.page_image import image_url
from pinboard.pins.public_addresses import parse, refusal

LOOPBACK = "a loopback address"
PRIVATE = "a private address"
LINK_LOCAL = "a link-local address"
MULTICAST = "a multicast address"
UNSPECIFIED = "an unspecified address"
REFUSED = "refused"  # for any reason: the categories of the rarer ranges vary by source

REFUSED_ADDRESSES = [
    ("127.0.0.1", LOOPBACK),
    ("127.255.255.254", LOOPBACK),
    ("::1", LOOPBACK),
    ("::ffff:127.0.0.1", LOOPBACK),  # IPv4-mapped
    ("0.0.0.0", UNSPECIFIED),
    ("::", UNSPECIFIED),
    ("10.0.0.1", PRIVATE),
    ("172.16.5.4", PRIVATE),
    ("172.31.255.255", PRIVATE),
    ("192.168.1.1", PRIVATE),
    ("fc00::1", PRIVATE),
    ("fd12:3456::1", PRIVATE),
    ("::ffff:10.0.0.1", PRIVATE),
    ("169.254.169.254", LINK_LOCAL),  # the cloud's metadata service
    ("::ffff:169.254.169.254", LINK_LOCAL),
    ("fe80::1", LINK_LOCAL),
    ("224.0.0.1", MULTICAST),
    ("239.255.255.250", MULTICAST),
    ("ff02::1", MULTICAST),
    ("ff0e::1", MULTICAST),  # global scope, still multicast
    ("0.1.2.3", REFUSED),  # "this network"
    ("100.64.0.1", REFUSED),  # shared address space (carrier-grade NAT)
    ("192.0.2.1", REFUSED),  # documentation
    ("198.18.0.1", REFUSED),  # benchmarking
    ("240.0.0.1", REFUSED),  # reserved
    ("255.255.255.255", REFUSED),  # broadcast
    ("2001:db8::1", REFUSED),  # documentation
    ("fec0::1", REFUSED),  # site-local (deprecated)
    ("2002:7f00:1::", REFUSED),  # 6to4 of 127.0.0.1
    ("2002:a00:1::", REFUSED),  # 6to4 of 10.0.0.1
    ("::127.0.0.1", REFUSED),  # IPv4-compatible (deprecated)
    ("64:ff9b::a00:1", REFUSED),  # NAT64 of 10.0.0.1
    ("64:ff9b::808:808", REFUSED),  # NAT64 at all: the gateway's network decides
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", REFUSED),  # Teredo
]
PUBLIC_ADDRESSES = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "2002:808:808::",  # 6to4 of a public address
]


@pytest.mark.parametrize(("text", "reason"), REFUSED_ADDRESSES)
def test_addresses_that_are_not_public_are_refused(text: str, reason: str) -> None:
    address = parse(text)
    assert address is not None
    why = refusal(address)
    assert why is not None
    if reason != REFUSED:
        assert why.startswith(reason), why


@pytest.mark.parametrize("text", PUBLIC_ADDRESSES)
def test_public_addresses_may_be_fetched_from(text: str) -> None:
    address = parse(text)
    assert address is not None
    assert refusal(address) is None
    assert refusal(address, allow_loopback=True) is None


@pytest.mark.parametrize(
    ("text", "allowed"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        # Only loopback itself: everything else stays refused.
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("169.254.169.254", False),
        ("::127.0.0.1", False),
        ("2002:7f00:1::", False),
    ],
)
def test_the_loopback_setting_lets_loopback_through_and_nothing_else(
    text: str, allowed: bool
) -> None:
    address = parse(text)
    assert address is not None
    assert (refusal(address, allow_loopback=True) is None) is allowed


def test_a_resolver_answer_that_is_no_address_is_none_and_a_scope_is_dropped() -> None:
    assert parse("example.com") is None
    assert parse("fe80::1%eth0") == parse("fe80::1")


PAGE = "https://example.com/recipes/tart.html"


@pytest.mark.parametrize(
    ("html", "chosen"),
    [
        (
            '<meta name="twitter:image" content="/t.png"><meta property="og:image" content="/o.png">'
            '<img src="big.png" width="900" height="900">',
            "https://example.com/o.png",
        ),
        ('<meta name="twitter:image" content="t.png"><img src="i.png">', f"{PAGE[:-9]}t.png"),
        (
            '<img src="a.png" width="10" height="10"><img src="b.png" width="300px" height="200">'
            '<img src="c.png" width="100%" height="900"><img src="d.png" width="20" height="20">',
            "https://example.com/recipes/b.png",
        ),
        ('<img src="a.png"><img src="b.png">', "https://example.com/recipes/a.png"),
        (
            '<base href="https://cdn.example.net/x/"><img src="a.png">',
            "https://cdn.example.net/x/a.png",
        ),
        (
            '<img src="data:image/png;base64,AAAA"><img src="//img.example/b.jpg">',
            "https://img.example/b.jpg",
        ),
        (
            '<meta property="og:image" content="javascript:alert(1)"><img src="a.png">',
            f"{PAGE[:-9]}a.png",
        ),
        ("<p>No pictures here.</p>", None),
        ("<img src=''><meta property='og:image' content=' '>", None),
    ],
)
def test_a_page_offers_its_sharing_image_else_its_largest_else_its_first(
    html: str, chosen: str | None
) -> None:
    assert image_url(html, PAGE) == chosen
