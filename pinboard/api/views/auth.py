"""``POST /api/v1/auth/token``: trade a username (or email) and password for a token."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from ... import ratelimit
from ...errors import InvalidField, Unauthenticated
from ...users.actions import authenticate
from ...users.auth import issue_token
from ..http import endpoint, json_body, ok


def _issue(request: HttpRequest) -> HttpResponse:
    ratelimit.check(request, "login")
    data = json_body(request, required=("username", "password"))
    for name in ("username", "password"):
        if not isinstance(data[name], str):
            raise InvalidField(f"{name} must be a string", field=name)
    user = authenticate(data["username"], data["password"])
    if user is None:
        raise Unauthenticated("wrong username or password")
    return ok({"token": issue_token(user)})


token = endpoint(POST=_issue)
