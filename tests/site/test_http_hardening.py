"""HTTP hardening: security headers and a Content-Security-Policy on every page, templates
that need no inline script or style, HEAD wherever GET works (every route of the URLconf),
and production's HTTPS-only settings behind the load balancer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from csp.utils import build_policy
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from pinboard.api import http as api_http
from pinboard.data_plane import cached_store
from pinboard.pins.actions import add_comment
from pinboard.settings.secret import new_key
from tests.site.page_helpers import log_in

REPO = Path(__file__).resolve().parents[2]
#: Headers a HEAD answer must share with the GET answer of the same URL.
SAME_FOR_HEAD = (
    "Content-Type",
    "Allow",
    "Location",
    "Content-Security-Policy",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "X-Frame-Options",
)


def routes() -> Iterator[tuple[str, list[str]]]:
    """Every named route of the site and the API: (name, names of its URL parameters)."""

    def walk(
        patterns: list[Any], params: list[str], namespace: str = ""
    ) -> Iterator[tuple[str, list[str]]]:
        for entry in patterns:
            pattern = entry.pattern
            names = list(getattr(pattern, "converters", {}) or pattern.regex.groupindex)
            if isinstance(entry, URLResolver):
                inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
                yield from walk(entry.url_patterns, params + names, inner)
            elif isinstance(entry, URLPattern) and entry.name:
                yield namespace + entry.name, params + names
            else:  # only the API's and the admin's catch-alls and redirects may go unnamed
                assert entry.callback is api_http.not_found or namespace == "admin:", entry

    yield from walk(get_resolver().url_patterns, [])


@pytest.fixture
def urls(cast: dict[str, Any]) -> dict[str, str]:
    """Every route as a URL naming real objects (ann's, bob's as the other pinner)."""
    ann, bob, recipes = cast["ann"], cast["bob"], cast["recipes"]
    values = {
        "username": ann["username"],
        "slug": recipes["slug"],
        "board_id": str(recipes["id"]),
        "pin_id": str(cast["pin"]),
        "user_id": str(bob["id"]),
        "comment_id": str(add_comment(bob["id"], cast["pin"], "Nice")["id"]),
        "answer": "accept",  # an invitation's (none here: a 404)
        "variant": "full",  # a pin's image file (a public pin's: a redirect)
        # the operators' console and the admin (staff only: 302 or 403 here)
        "host": next(iter(cached_store().topology.hosts)),
        "entry_id": "1",
        "job_id": "1",
        "operation_id": "1",
        "how": "abort",
        "action": "close-range",
        "app_label": "ops",
        "object_id": "1",
        "content_type_id": "1",
        "id": "1",
    }
    urls = {}
    for name, params in routes():
        missing = set(params) - set(values)
        assert not missing, f"route {name}: give this test a value for {missing}"
        urls[name] = reverse(name, kwargs={p: values[p] for p in params})
    return urls


@pytest.fixture
def ann_client(client: Client, cast: dict[str, Any]) -> Client:
    log_in(client, cast["ann"])
    return client


def api_headers(cast: dict[str, Any]) -> dict[str, str]:
    from pinboard.users.tokens import issue_token

    return {"Authorization": f"Token {issue_token(cast['ann'])['token']}"}


# -- headers -------------------------------------------------------------------------


def check_security_headers(response: Any, url: str) -> None:
    assert response["X-Content-Type-Options"] == "nosniff", url
    assert response["Referrer-Policy"] == "same-origin", url
    assert response["X-Frame-Options"] == "DENY", url
    directives = response["Content-Security-Policy"].split("; ")
    policy = dict(directive.partition(" ")[::2] for directive in directives)
    assert policy["default-src"] == "'self'", url
    assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'", url
    assert policy["frame-ancestors"] == "'none'" and policy["object-src"] == "'none'", url
    assert "unsafe" not in response["Content-Security-Policy"], url
    assert response["Content-Security-Policy"] == build_policy(), url  # django-csp's, as set


def test_every_page_and_endpoint_sends_the_security_headers(
    ann_client: Client, urls: dict[str, str], cast: dict[str, Any]
) -> None:
    anonymous = Client()
    html_pages = 0
    for url in urls.values():
        headers = api_headers(cast) if url.startswith("/api/") else {}
        for client in (ann_client, anonymous):
            response = client.get(url, headers=headers)
            check_security_headers(response, url)
            html_pages += response["Content-Type"].startswith("text/html")
    for url in ("/pin/12x/", "/nobody_is_called_this/", "/api/v1/nowhere"):  # error pages
        check_security_headers(anonymous.get(url), url)
    assert html_pages >= 15


#: What a policy without 'unsafe-inline' would block (or an img-src of 'self' would).
INLINE = re.compile(
    r"<script(?![^>]*\bsrc=)[^>]*>"  # an inline script
    r"|<style\b"  # an inline style sheet
    r"|\son[a-z]+\s*="  # an event handler attribute
    r"|\sstyle\s*="  # a style attribute
    r"|(?:href|src)\s*=\s*[\"']?\s*(?:javascript|data):",  # script and data URLs
    re.IGNORECASE,
)


def test_no_template_needs_inline_script_or_style() -> None:
    templates = sorted((REPO / "templates").rglob("*.html"))
    templates += sorted((REPO / "pinboard").rglob("templates/**/*.html"))
    assert len(templates) >= 10
    offenders = {
        str(path.relative_to(REPO)): INLINE.findall(path.read_text())
        for path in templates
        if INLINE.search(path.read_text())
    }
    assert not offenders


# -- HEAD --------------------------------------------------------------------------


def test_head_answers_wherever_get_does(
    ann_client: Client, urls: dict[str, str], cast: dict[str, Any]
) -> None:
    answered = 0
    for name, url in urls.items():
        headers = api_headers(cast) if url.startswith("/api/") else {}
        get = ann_client.get(url, headers=headers)
        head = ann_client.head(url, headers=headers)
        assert head.status_code == get.status_code, (name, url, get.status_code, head.content)
        for header in SAME_FOR_HEAD:
            assert head.get(header) == get.get(header), (name, url, header)
        assert head.content == b""
        if get.status_code == 405:
            assert "HEAD" not in get["Allow"] and "GET" not in get["Allow"], (name, get["Allow"])
        else:
            answered += 1
            if "Allow" in get:
                assert "HEAD" in get["Allow"], (name, get["Allow"])
    assert answered >= 25


def test_a_405_lists_head_beside_get(client: Client, cast: dict[str, Any]) -> None:
    response = client.post(f"/api/v1/pins/{cast['pin']}/likes")
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"


# -- production ----------------------------------------------------------------------

PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
client = Client(HTTP_HOST="pinboard.example.com")
plain = client.get("/api/v1/openapi.json")
behind_tls = client.get("/api/v1/openapi.json", headers={"X-Forwarded-Proto": "https"})
# A Host not served, refused before the pinner is known: the 400 page renders all the same.
stranger = Client(HTTP_HOST="not-served.example", raise_request_exception=False)
print(json.dumps({
    "plain": [plain.status_code, plain.get("Location")],
    "behind_tls": [behind_tls.status_code, behind_tls.get("Strict-Transport-Security"),
                   behind_tls.get("Content-Security-Policy")],
    "cookies_secure": [settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE],
    "not_served": [stranger.get(path).status_code for path in ("/", "/api/v1/openapi.json")],
}))
"""


def test_production_is_https_only_behind_the_load_balancer(tmp_path: Path) -> None:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("PINBOARD_")}
    env = {
        **inherited,
        "DJANGO_SETTINGS_MODULE": "pinboard.settings.prod",
        "PINBOARD_VAR_DIR": str(tmp_path),
        "PINBOARD_SECRET_KEY": new_key(),
        "PINBOARD_ALLOWED_HOSTS": "pinboard.example.com",
        "PINBOARD_S3_BUCKET": "pinboard-media",
        "PINBOARD_MEDIA_DOMAIN": "media.pinboard.example.com",
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["plain"] == [301, "https://pinboard.example.com/api/v1/openapi.json"]
    assert seen["not_served"] == [400, 400]
    status, hsts, policy = seen["behind_tls"]
    assert status == 200
    assert hsts == "max-age=31536000; includeSubDomains; preload"
    # The media domain, and the bucket itself for a secret board's pins' signed URLs.
    media = "https://media.pinboard.example.com https://pinboard-media.s3.amazonaws.com"
    assert f"img-src 'self' {media};" in policy + ";"
    assert seen["cookies_secure"] == [True, True]
