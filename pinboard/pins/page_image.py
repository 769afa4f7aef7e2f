"""Which image a web page offers to pin: the one it names for sharing (``og:image``, then
``twitter:image``), else its largest ``<img>`` by declared width x height, else its first.
Addresses resolve against the page's URL (or its ``<base href>``); only http(s) ones count.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

#: Sharing metadata naming the page's image, most preferred first.
SHARING_NAMES = (
    "og:image",
    "og:image:url",
    "og:image:secure_url",
    "twitter:image",
    "twitter:image:src",
)
_PIXELS = re.compile(r"\s*([0-9]{1,6})(?:px)?\s*", re.ASCII)


class _ImageCandidates(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.shared: dict[str, str] = {}
        self.images: list[tuple[str, int]] = []  # (src, declared area; 0 if undeclared)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values: dict[str, str] = {}
        for name, value in attrs:  # the first of a repeated attribute counts, as in browsers
            values.setdefault(name, (value or "").strip())
        if tag == "base" and self.base is None and values.get("href"):
            self.base = values["href"]
        elif tag == "meta":
            key = (values.get("property") or values.get("name") or "").lower()
            if key in SHARING_NAMES and values.get("content"):
                self.shared.setdefault(key, values["content"])
        elif tag == "img" and values.get("src"):
            self.images.append(
                (values["src"], _pixels(values.get("width")) * _pixels(values.get("height")))
            )


def _pixels(declared: str | None) -> int:
    match = _PIXELS.fullmatch(declared or "")
    return int(match.group(1)) if match else 0


def image_url(html: str, page_url: str) -> str | None:
    """The absolute URL of the image ``html`` (the page at ``page_url``) offers, or None."""
    parser = _ImageCandidates()
    parser.feed(html)
    parser.close()
    base = urljoin(page_url, parser.base) if parser.base else page_url
    shared = [parser.shared[name] for name in SHARING_NAMES if name in parser.shared]
    # The largest declared area first; equal ones (undeclared ones among them) in page order.
    images = [src for src, _ in sorted(parser.images, key=lambda image: -image[1])]
    for candidate in (*shared, *images):
        url = urljoin(base, candidate)
        if urlsplit(url).scheme in ("http", "https"):  # not data:, javascript:, ...
            return url
    return None
