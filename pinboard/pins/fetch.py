"""Fetch the image to pin from a URL a pinner pasted: an image's, or a web page's.

The server makes the request, so the URL must not reach what only the server can:
http(s) only, and every address the host resolves to must be public
(public_addresses.py). The connection goes to the address that was checked, never
to a second resolution of the name (which a rebinding DNS server could answer
differently), and each redirect is checked the same way, at most ``MAX_REDIRECTS``.
Everything is bounded: one deadline for the whole fetch (redirects and a page's
image included; a watchdog cuts the connection when it passes, so a server that
trickles bytes cannot stretch it), an image at most ``image_files.MAX_BYTES`` (streamed,
read no further), a page at most ``MAX_PAGE_BYTES`` (its start holds the sharing
metadata). A page's image is chosen by page_image.py. No URL that names one of the
site's private files is fetched, at any step (``image_files.names_private_file``). Every
failure is a ``CouldNotFetch`` (an address refused says only that:
``AddressNotAllowed``); what was fetched is checked as an upload is, by the caller.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import logging
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit

from ..errors import CouldNotFetch
from ..image_files import MAX_BYTES, names_private_file
from . import page_image
from .public_addresses import Address, parse, refusal

logger = logging.getLogger(__name__)

MAX_URL = 2048
MAX_REDIRECTS = 5
MAX_PAGE_BYTES = 1024 * 1024
PAGE_TYPES = {"text/html", "application/xhtml+xml"}
REDIRECTS = {301, 302, 303, 307, 308}
_CHUNK = 64 * 1024
_HEADERS = {
    "User-Agent": "pinboard (fetching an image a pinner pinned)",
    "Accept": "image/jpeg,image/png,image/gif,image/webp,text/html;q=0.9,*/*;q=0.1",
    "Accept-Encoding": "identity",
}
# Spaces, control characters (C0, DEL, C1) and lone surrogates: a URL holds none.
_NOT_IN_URL = re.compile("[\x00-\x20\x7f-\x9f\ud800-\udfff]")
# Characters a request target keeps as they are; any other is percent-encoded.
_PATH_SAFE = "/%:@!$&'()*+,;=~"
_QUERY_SAFE = _PATH_SAFE + "?"

Resolver = Callable[[str, int], list[str]]


class AddressNotAllowed(CouldNotFetch):
    """A URL whose host is, or resolves to, an address that is not public. The pinner is
    told only that the address is not allowed: what a name resolves to inside the site's
    network, and what kind of address it is, are not theirs to learn. ``why`` says it, for
    the log."""

    def __init__(self, why: str) -> None:
        super().__init__("the address is not allowed")
        self.why = why
        logger.info("pin fetch refused: %s", why)


@dataclass(frozen=True)
class FetchedImage:
    data: bytes
    #: Where the pinned URL led, after redirects: the page, or the image itself.
    source_url: str


def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (one DNS resolution; its time is the resolver's)."""
    answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(answer[4][0]) for answer in answers))


def fetch_image(
    url: object, *, seconds: float, allow_loopback: bool = False, resolver: Resolver = resolve
) -> FetchedImage:
    """The image at ``url``, or the image the web page at ``url`` offers."""
    fetch = _Fetch(_Deadline(seconds), allow_loopback, resolver)
    first = fetch.get(url)
    if first.page_text is None:
        return FetchedImage(first.body, first.url)
    image_url = page_image.image_url(first.page_text, first.url)
    if image_url is None:
        raise CouldNotFetch("the page names no image (no og:image, twitter:image or <img>)")
    image = fetch.get(image_url)
    if image.page_text is not None:
        raise CouldNotFetch(f"the page's image, {image.url[:200]}, is a web page")
    return FetchedImage(image.body, first.url)


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def passed(self) -> bool:
        return time.monotonic() >= self.end

    def left(self) -> float:
        """The seconds left; CouldNotFetch once none are."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise self.error()
        return left

    def error(self) -> CouldNotFetch:
        unit = "second" if self.seconds == 1 else "seconds"
        return CouldNotFetch(f"it took longer than {self.seconds:g} {unit}")


@dataclass(frozen=True)
class _Target:
    url: str
    https: bool
    host: str  # ASCII (IDNA)
    port: int
    request_target: str  # path and query, percent-encoded


def _target(url: object) -> _Target:
    if not isinstance(url, str) or not url.strip():
        raise CouldNotFetch("a URL is required")
    url = url.strip()
    if len(url) > MAX_URL:
        raise CouldNotFetch(f"URLs must be at most {MAX_URL} characters")
    if _NOT_IN_URL.search(url):
        raise CouldNotFetch("the URL holds spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise CouldNotFetch("this is not a URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise CouldNotFetch("only http and https URLs can be fetched")
    if not parts.hostname:
        raise CouldNotFetch("the URL names no host")
    if parts.username is not None or parts.password is not None:
        raise CouldNotFetch("URLs with a user name or password are not fetched")
    try:
        host = parts.hostname.encode("idna").decode("ascii")
    except UnicodeError:
        raise CouldNotFetch("the URL's host name is not valid") from None
    path = quote(parts.path or "/", safe=_PATH_SAFE)
    query = quote(parts.query, safe=_QUERY_SAFE)
    return _Target(
        url=url,
        https=scheme == "https",
        host=host,
        port=(443 if scheme == "https" else 80) if port is None else port,
        request_target=f"{path}?{query}" if query else path,
    )


@dataclass(frozen=True)
class _Response:
    url: str
    body: bytes
    page_text: str | None  # the decoded text of a web page; None for anything else


class _Fetch:
    def __init__(self, deadline: _Deadline, allow_loopback: bool, resolver: Resolver) -> None:
        self.deadline, self.allow_loopback, self.resolver = deadline, allow_loopback, resolver

    def get(self, url: object) -> _Response:
        """GET ``url``, following redirects."""
        for _ in range(MAX_REDIRECTS + 1):
            target = _target(url)
            if names_private_file(target.url):  # a secret board's image: saved, if at all
                raise CouldNotFetch("the address is of a private image")
            connection = self._connect(target, self._public_addresses(target))
            # Past the deadline the watchdog shuts the socket: a blocked read returns at once.
            watchdog = threading.Timer(self.deadline.left(), _cut, (connection.pinned,))
            watchdog.daemon = True
            watchdog.start()
            answer: http.client.HTTPResponse | None = None
            try:
                connection.request("GET", target.request_target, headers=_HEADERS)
                answer = connection.getresponse()
                if answer.status in REDIRECTS:
                    location = answer.getheader("Location", "").strip()
                    if not location:
                        raise CouldNotFetch(f"the server answered {answer.status} with no Location")
                    url = urljoin(target.url, location)
                    continue
                return self._response(target, answer)
            except (OSError, http.client.HTTPException) as error:
                raise self._failure(error) from None
            finally:
                watchdog.cancel()
                if answer is not None:  # it holds the socket once the connection lets go
                    answer.close()
                connection.close()
        raise CouldNotFetch(f"more than {MAX_REDIRECTS} redirects")

    def _public_addresses(self, target: _Target) -> list[Address]:
        try:
            answers = self.resolver(target.host, target.port)
        except (OSError, UnicodeError):
            answers = []
        addresses = [parse(answer) for answer in answers]
        if not addresses or None in addresses:
            raise CouldNotFetch(f"the host {target.host} could not be found")
        checked = [address for address in addresses if address is not None]
        for address in checked:  # every one: the connection may go to any of them
            why = refusal(address, allow_loopback=self.allow_loopback)
            if why is not None:
                host = target.host
                where = host if parse(host) == address else f"{host} resolves to {address}, which"
                raise AddressNotAllowed(f"{where} is {why}")
        return checked

    def _connect(self, target: _Target, addresses: list[Address]) -> _PinnedHTTPConnection:
        """A connection to the first of ``addresses`` that answers."""
        failure: OSError | None = None
        for address in addresses:
            kind = _PinnedHTTPSConnection if target.https else _PinnedHTTPConnection
            connection = kind(target.host, target.port, str(address), self.deadline.left())
            try:
                connection.connect()
            except OSError as error:
                connection.close()
                failure = error
            else:
                return connection
        assert failure is not None
        raise self._failure(failure)

    def _response(self, target: _Target, answer: http.client.HTTPResponse) -> _Response:
        if answer.status != 200:
            raise CouldNotFetch(f"the server answered {answer.status} {answer.reason[:100]}")
        is_page = answer.headers.get_content_type() in PAGE_TYPES
        limit = MAX_PAGE_BYTES if is_page else MAX_BYTES
        declared = answer.getheader("Content-Length", "").strip()
        if not is_page and declared.isdigit() and int(declared) > limit:
            raise _too_large()
        body = self._read(answer, limit)
        if len(body) > limit:
            if not is_page:
                raise _too_large()
            body = body[:limit]  # a page's start is enough: it names its image in its head
        if not is_page:
            return _Response(target.url, body, None)
        charset = answer.headers.get_content_charset() or "utf-8"
        try:
            text = body.decode(charset, errors="replace")
        except LookupError:  # a charset Python does not know
            text = body.decode("utf-8", errors="replace")
        return _Response(target.url, body, text)

    def _read(self, answer: http.client.HTTPResponse, limit: int) -> bytes:
        """The body, streamed: at most ``limit`` + 1 bytes are read."""
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = answer.read1(min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if self.deadline.passed():  # the watchdog cut it short
            raise self.deadline.error()
        if size <= limit and answer.length:  # the server closed before its Content-Length
            raise CouldNotFetch("the server closed the connection before the end")
        return b"".join(chunks)

    def _failure(self, error: Exception) -> CouldNotFetch:
        if self.deadline.passed() or isinstance(error, TimeoutError):
            return self.deadline.error()
        if isinstance(error, ssl.SSLCertVerificationError):
            return CouldNotFetch("the server's certificate is not valid")
        if isinstance(error, ssl.SSLError):
            return CouldNotFetch("the secure connection failed")
        if isinstance(error, ConnectionRefusedError):
            return CouldNotFetch("the server refused the connection")
        if isinstance(error, http.client.HTTPException):
            return CouldNotFetch("the server's answer is not valid HTTP")
        return CouldNotFetch("the connection failed")


def _too_large() -> CouldNotFetch:
    return CouldNotFetch(f"images must be at most {MAX_BYTES // (1024 * 1024)} MB")


def _cut(sock: socket.socket | None) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):  # the plain socket's shutdown, TLS or not
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """HTTP to one checked address; the host name goes only in the Host header."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address
        #: The socket, kept for the watchdog: the connection forgets its own once a response
        #: that ends with the connection takes it over.
        self.pinned: socket.socket | None = None

    def connect(self) -> None:
        self.sock = self.pinned = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPSConnection(_PinnedHTTPConnection):
    """HTTPS to one checked address; the certificate is checked against the host name."""

    default_port = 443  # left out of the Host header

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        try:
            self.sock = self.pinned = _tls().wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise


@functools.cache
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()
