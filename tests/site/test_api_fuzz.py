"""Fuzz the JSON API with schemathesis, in process, against its own OpenAPI document.

Every operation in /api/v1/openapi.json gets a bounded number of generated
requests (valid and invalid), sent through the Django WSGI app with a real
pinner's token. About half of the generated IDs are swapped for real ones
(that pinner's board and pin, another pinner's, a fresh board or pin to
delete) so the write paths run, not only their 404s. Each response must not
be a 5xx and must match the document: its status is one the operation lists,
its body the schema of that status, its content type and (for a 405) its
``Allow`` header; undocumented methods must get a 405 and token-only
operations a 401 without the token.

Two built-in checks are left out on purpose: ``positive_data_acceptance``
(a schema-valid request may still be refused: an opaque cursor the server did
not make, following yourself, a link that is not http(s)) and
``negative_data_rejection`` (the API ignores query parameters it does not
know, as HTTP APIs do, which that check counts as accepting invalid data).

``PINBOARD_FUZZ_EXAMPLES`` (default 50) sets the examples per operation; run
with ``-s`` to see how the responses were spread over status codes.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    ignored_auth,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from pinboard.api.openapi import build
from pinboard.boards.actions import create_board
from pinboard.follows.actions import follow_board, follow_user
from pinboard.likes.actions import like
from pinboard.pins.actions import add_comment, create_pin, save_pin
from pinboard.users.actions import sign_up
from pinboard.users.tokens import issue_token
from shardstore import Store
from tests.site.test_image_limits import declared_png
from toolkit.images import image_bytes, image_upload

app = get_wsgi_application()
schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    unsupported_method,
    allow_header_conformance,
    ignored_auth,
]
_names = itertools.count(1)
PASSWORD = "plum-orchard-42"  # every fuzz pinner's
#: Operations that revoke the token they are sent with (a password change revokes all of
#: the pinner's): each gets a throwaway pinner's token, so the cast's stays valid.
SELF_REVOKING = {("DELETE", "/api/v1/auth/token"), ("POST", "/api/v1/me/password")}


@dataclass
class Cast:
    """The pinner whose token the fuzzer uses, their board and pin, and another pinner's."""

    me: dict[str, Any]
    token: str
    board: str
    pin: str
    other: str
    other_board: str
    other_pin: str

    def fresh_board(self) -> str:
        return str(create_board(self.me["id"], f"Doomed {next(_names)}")["id"])

    def fresh_pin(self) -> str:
        return str(create_pin(self.me["id"], int(self.board), image_upload("fuzz.png"))["id"])


def _pinner(name: str) -> dict[str, Any]:
    n = next(_names)
    return sign_up(f"{name}_{n}_fz", f"{name}_{n}_fz@example.com", PASSWORD)


@pytest.fixture(scope="module")
def cast(site_store: Store) -> Cast:
    me, other = _pinner("fuzzer"), _pinner("fuzzed")
    board = create_board(me["id"], "Fuzz board")
    other_board = create_board(other["id"], "Not yours")
    pin = create_pin(me["id"], board["id"], image_upload("fuzz.png"))["id"]
    # One notification of each kind for me, so that their shapes are checked too.
    like(other["id"], pin)
    save_pin(other["id"], pin, other_board["id"])
    add_comment(other["id"], pin, "fuzzed")
    follow_board(other["id"], board["id"])
    follow_user(other["id"], me["id"])
    return Cast(
        me=me,
        token=issue_token(me)["token"],
        board=str(board["id"]),
        pin=str(pin),
        other=str(other["id"]),
        other_board=str(other_board["id"]),
        other_pin=str(create_pin(other["id"], other_board["id"], image_upload("fuzz.png"))["id"]),
    )


#: The images a body's ``image`` is swapped for: a plain one, long ones a grid can show,
#: and strips far too tall or wide to show (a 422, never a 500).
FUZZ_IMAGES = [
    image_bytes(),
    image_bytes((40, 800)),
    image_bytes((800, 40)),
    declared_png(1, 100_000),
    declared_png(100_000, 1),
    declared_png(300, 70_000),
]


def _coin(value: object, sides: int = 2) -> int:
    """A stable pseudo-random choice from a generated value (so shrinking stays deterministic)."""
    return zlib.crc32(repr(value).encode()) % sides


def _positive(case: schemathesis.Case, location: ParameterLocation) -> bool:
    """Whether ``location`` was generated valid (a deliberately invalid one stays as it is)."""
    info = case.meta.components.get(location) if case.meta else None
    return info is None or info.mode.is_positive


def use_real_ids(case: schemathesis.Case, cast: Cast) -> None:
    """Swap about half of the generated IDs for real ones, mine or another pinner's."""
    method = case.method.upper()
    params = (case.path_parameters or {}) if _positive(case, ParameterLocation.PATH) else {}
    for name, mine, theirs, fresh in (
        ("user_id", str(cast.me["id"]), cast.other, None),
        ("board_id", cast.board, cast.other_board, cast.fresh_board),
        ("pin_id", cast.pin, cast.other_pin, cast.fresh_pin),
    ):
        if name not in params:
            continue
        choice = _coin(params[name], 4)
        if choice == 1:
            # A DELETE of my object consumes it; give it a fresh one to delete.
            params[name] = fresh() if method == "DELETE" and fresh else mine
        elif choice == 2:
            params[name] = theirs
    if "username" in params and _coin(params["username"]) == 1:
        params["username"] = cast.me["username"]
    query = (case.query or {}) if _positive(case, ParameterLocation.QUERY) else {}
    if isinstance(query.get("ids"), str) and _coin(query["ids"]) == 1:
        query["ids"] = f"{cast.other},{cast.me['id']}"
    if case.path == "/api/v1/search" and isinstance(query.get("q"), str) and _coin(query) == 1:
        query["q"] = "fuzz"  # finds the cast's boards, their pins and the pinners...
        query.pop("cursor", None)  # ...from the first page (a made-up cursor is a 400)
    body = case.body if _positive(case, ParameterLocation.BODY) else None
    if isinstance(body, dict) and "board_id" in body and _coin(body) == 1:
        body["board_id"] = cast.board
    if isinstance(body, dict) and "image" in body and _coin(body.get("image")) == 1:
        body["image"] = FUZZ_IMAGES[_coin((body.get("image"), 1), len(FUZZ_IMAGES))]
    if case.path == "/api/v1/auth/token" and isinstance(body, dict) and _coin(body) == 1:
        body.update(username=cast.me["username"], password=PASSWORD)
    if case.path == "/api/v1/me/password" and isinstance(body, dict) and _coin(body) == 1:
        body["old_password"] = PASSWORD


# -- malformed input the document cannot describe ------------------------------------

#: Other spellings of an ID ("{}"): each is a 404, never another address of the object.
#: (No line breaks or tabs: URL parsing drops them on the client's side of the wire;
#: tests/site/test_bad_params.py sends them percent-encoded.)
ID_SPELLINGS = ["0{}", "00{}", "+{}", "-{}", " {}", "{} ", "{}.0", "{}e0", "{arabic}"]
ARABIC_INDIC = str.maketrans(
    "0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"
)
FOREIGN_CURSORS = ["abc", "Zm9vOmJhcg", "MTox" * 16, "-1", "\x00", "9" * 64]
BAD_LIMITS = ["05", "+5", " 5", "5 ", "1e2", "9" * 400, "\u0665", "0", "101", "-1"]
#: C0 and C1 controls and DEL: no text field takes them (pinboard/text.py).
CONTROLS = "\x00\x01\x07\x0b\x1b\x7f\x85\x9b"
FORBIDDEN_IN_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
PASSWORD_FIELDS = {"password", "old_password", "new_password"}  # not text: any character goes
PAGED = {
    (method.upper(), path)
    for path, operations in build()["paths"].items()
    for method, operation in operations.items()
    if any(p["name"] == "cursor" and p["in"] == "query" for p in operation.get("parameters", []))
}


@dataclass
class Malformed:
    """What a malformed request may get: one of ``statuses``, its error naming ``field`` or
    its message holding ``message`` when they are given."""

    kind: str
    statuses: set[int]
    field: str | None = None
    message: str | None = None

    def check(self, response: Any) -> None:
        assert response.status_code in self.statuses, response.content[:300]
        error = response.json()["error"]
        if self.field is not None:
            assert error.get("field") == self.field, error
        if self.message is not None:
            assert self.message in error["message"], error


CLIENT_ERRORS = set(range(400, 500))


def malform(case: schemathesis.Case, cast: Cast) -> Malformed | None:
    """Make about one case in three malformed in a way schema-driven generation does not:
    another spelling of a real ID, a foreign cursor or odd limit, a control character in
    a text field, JSON nested too deep or holding huge numbers. Returns what the answer
    must be (None if the case was left alone)."""
    method = case.method.upper()
    if method != case.operation.method.upper() or not all(
        _positive(case, location) for location in ParameterLocation
    ):
        return None  # an unsupported-method probe, or already invalid on purpose
    body = case.body
    choice = _coin((method, case.path, case.path_parameters, case.query, repr(body)), 18)
    mine = {"user_id": str(cast.me["id"]), "board_id": cast.board, "pin_id": cast.pin}
    id_names = [name for name in (case.path_parameters or {}) if name in mine]

    def use_mine() -> None:  # so that the malformed part, not the ID, decides the answer
        for name in id_names:
            case.path_parameters[name] = mine[name]

    text_fields = []
    if isinstance(body, dict):
        text_fields = [
            k for k, v in body.items() if isinstance(v, str) and k not in PASSWORD_FIELDS
        ]
    json_body = case.media_type == "application/json"
    if choice == 0 and id_names:
        name = id_names[0]
        spelling = ID_SPELLINGS[_coin((case.path_parameters, 1), len(ID_SPELLINGS))]
        case.path_parameters[name] = spelling.format(
            mine[name], arabic=mine[name].translate(ARABIC_INDIC)
        )
        return Malformed("id spelling", {404})
    if choice in (1, 2) and (method, case.path) in PAGED:
        use_mine()
        pool, param = (FOREIGN_CURSORS, "cursor") if choice == 1 else (BAD_LIMITS, "limit")
        query = {k: v for k, v in (case.query or {}).items() if k not in ("cursor", "limit")}
        case.query = {**query, param: pool[_coin(case.query, len(pool))]}
        return Malformed(param, {400}, field=param)
    if choice == 3 and text_fields:
        field = text_fields[_coin(body, len(text_fields))]
        body[field] = (
            body[field][:5] + CONTROLS[_coin(body[field], len(CONTROLS))] + body[field][5:]
        )
        return Malformed("control character", CLIENT_ERRORS)
    if choice == 4 and json_body:
        use_mine()
        nested = functools.reduce(lambda inner, _: [inner], range(32 + _coin(body, 200)), [])
        case.body = {"text": "[[[ brackets in a string do not count", "nested": nested}
        return Malformed("deep json", {400}, message="deep")
    if choice == 5 and json_body and isinstance(body, dict) and body:
        field = sorted(body)[_coin(body, len(body))]
        body[field] = (-1) ** _coin(body) * 10**400
        return Malformed("huge number", CLIENT_ERRORS)
    return None


def assert_text_refused(case: schemathesis.Case, status: int) -> None:
    """A request with a control character in a text field never succeeds."""
    if not isinstance(case.body, dict) or status >= 400:
        return
    for field, value in case.body.items():
        if isinstance(value, str) and field not in PASSWORD_FIELDS:
            assert not FORBIDDEN_IN_TEXT.search(value), (case.method, case.path, field, status)


TALLY: dict[str, Counter[int]] = defaultdict(Counter)


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    """Print how each operation's responses spread over status codes (shown with ``-s``)."""
    yield
    for op, counts in sorted(TALLY.items()):
        if sum(counts.values()) > 1:  # leave out the one-off unsupported-method probes
            print(op, dict(sorted(counts.items())))


@schema.parametrize()
@settings(
    max_examples=int(os.environ.get("PINBOARD_FUZZ_EXAMPLES", "50")),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_api_conforms_to_its_openapi_document(case: schemathesis.Case, cast: Cast) -> None:
    # A generated Host header is the deployment's to refuse (ALLOWED_HOSTS: Django's 400
    # page for any path), not an input of the operation under test.
    for name in [n for n in case.headers or {} if n.lower() == "host"]:
        del case.headers[name]
    use_real_ids(case, cast)
    malformed = malform(case, cast)
    token = cast.token
    if (case.method.upper(), case.path) in SELF_REVOKING:
        token = issue_token(_pinner("throwaway"))["token"]
    response = case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)
    TALLY[f"{case.method.upper()} {case.path}"][response.status_code] += 1
    if malformed is not None:
        TALLY[f"malformed: {malformed.kind}"][response.status_code] += 1
        malformed.check(response)
    assert_text_refused(case, response.status_code)
