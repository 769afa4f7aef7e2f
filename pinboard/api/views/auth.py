"""API tokens: trade a username (or email) and password for a token (POST),
or revoke the token the request carries (DELETE)."""

from __future__ import annotations

from typing import Annotated, TypedDict

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from msgspec import Meta

from ... import ratelimit
from ...errors import InvalidField, RateLimited, Unauthenticated, WrongPassword
from ...users.actions import authenticate
from ...users.tokens import issue_token, revoke_token
from ..http import endpoint, json_body, no_content, ok, token_of
from ..operations import operation
from ..schemas import Token


class Credentials(TypedDict):
    username: Annotated[str, Meta(description="Username or email.")]
    password: str


def token_lifetime() -> str:
    """settings.API_TOKEN_SECONDS for people: "30 days", "12 hours", "90 seconds"."""
    seconds = settings.API_TOKEN_SECONDS
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


@operation(
    lambda: (
        "Trade a username (or email) and password for an API token that expires"
        f" after {token_lifetime()}"
    ),
    ok=Token,
    errors=(Unauthenticated, InvalidField, RateLimited),
    body=Credentials,
)
def _issue(request: HttpRequest) -> HttpResponse:
    data = json_body(request, Credentials)
    for name in ("username", "password"):
        if not isinstance(data[name], str):
            raise InvalidField(f"{name} must be a string", field=name)
    try:
        with ratelimit.password_attempt(request, ratelimit.login_key(data["username"])):
            user = authenticate(data["username"], data["password"])
            if user is None:
                raise WrongPassword("wrong username or password")
    except WrongPassword as wrong:
        raise Unauthenticated(str(wrong)) from None
    return ok(issue_token(user))


@operation("Revoke the token sent with this request: it gets a 401 from then on", auth=True)
def _revoke(request: HttpRequest) -> HttpResponse:
    token = token_of(request)
    if token is None:
        raise Unauthenticated("send the token to revoke as `Authorization: Token <token>`")
    if not revoke_token(token):
        raise Unauthenticated("the token is not valid (expired, revoked or mistyped)")
    return no_content()


token = endpoint(POST=_issue, DELETE=_revoke)
