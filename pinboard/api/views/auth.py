"""``/api/v1/auth/token``: trade a username (or email) and password for a token (POST),
or revoke the token the request carries (DELETE)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from ... import ratelimit
from ...errors import InvalidField, Unauthenticated
from ...users.actions import authenticate
from ...users.tokens import issue_token, revoke_token
from ..http import endpoint, json_body, no_content, ok, token_of


def _issue(request: HttpRequest) -> HttpResponse:
    ratelimit.check(request, "login")
    data = json_body(request, required=("username", "password"))
    for name in ("username", "password"):
        if not isinstance(data[name], str):
            raise InvalidField(f"{name} must be a string", field=name)
    user = authenticate(data["username"], data["password"])
    if user is None:
        raise Unauthenticated("wrong username or password")
    return ok(issue_token(user))


def _revoke(request: HttpRequest) -> HttpResponse:
    token = token_of(request)
    if token is None:
        raise Unauthenticated("send the token to revoke as `Authorization: Token <token>`")
    if not revoke_token(token):
        raise Unauthenticated("the token is not valid (expired, revoked or mistyped)")
    return no_content()


token = endpoint(POST=_issue, DELETE=_revoke)
