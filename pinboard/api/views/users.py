"""Pinners: sign up, change a password, read a profile, their boards, followers and
following, follows."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from ... import ratelimit
from ...boards.queries import boards_page, get_boards
from ...errors import BadRequest, NotFoundError
from ...follows import actions as follow_actions
from ...follows.queries import followed_among, followers_page, following_page
from ...ids import parse_id
from ...users.actions import change_password, sign_up
from ...users.queries import get_user, get_user_by_username, get_users
from .. import serializers
from ..http import (
    created,
    endpoint,
    json_body,
    no_content,
    ok,
    page,
    page_params,
    require_pinner,
)

#: How many user IDs ``GET /users/{id}/follows?ids=`` checks at once.
MAX_FOLLOWS_IDS = 100


def user_or_404(raw_id: str, *, counts: bool = True) -> dict[str, Any]:
    user = get_user(parse_id(raw_id, "user"), counts=counts)
    if user is None:
        raise NotFoundError("no such user")
    return user


def _sign_up(request: HttpRequest) -> HttpResponse:
    ratelimit.check(request, "signup")
    data = json_body(request, required=("username", "email", "password"))
    return created(serializers.user(sign_up(data["username"], data["email"], data["password"])))


def _me(request: HttpRequest) -> HttpResponse:
    pinner = require_pinner(request)
    user = get_user(pinner["id"])
    if user is None:  # deleted between the token check and now
        raise NotFoundError("no such user")
    return ok(serializers.user(user, with_email=True))


def _change_password(request: HttpRequest) -> HttpResponse:
    """Set a new password; every API token of the pinner (this one too) is revoked."""
    pinner = require_pinner(request)
    ratelimit.check(request, "login")  # a stolen token must not buy unlimited password guesses
    data = json_body(request, required=("old_password", "new_password"))
    change_password(pinner["id"], data["old_password"], data["new_password"])
    return no_content()


def _get(request: HttpRequest, user_id: str) -> HttpResponse:
    return ok(serializers.user(user_or_404(user_id)))


def _by_username(request: HttpRequest, username: str) -> HttpResponse:
    user = get_user_by_username(username)
    if user is None:
        raise NotFoundError(f"no pinner named {username[:40]!r}")
    return ok(serializers.user(user))


def _boards(request: HttpRequest, user_id: str) -> HttpResponse:
    owner = user_or_404(user_id)
    limit, cursor = page_params(request)
    ids, next_cursor = boards_page(owner["id"], limit=limit, cursor=cursor)
    owner_followers = owner["counts"]["user_followed_by_users"]
    return page([serializers.board(b, owner_followers) for b in get_boards(ids)], next_cursor)


def _users_page(request: HttpRequest, user_id: str, list_page: Any) -> HttpResponse:
    user = user_or_404(user_id, counts=False)
    limit, cursor = page_params(request)
    ids, next_cursor = list_page(user["id"], limit=limit, cursor=cursor)
    return page([serializers.user(u) for u in get_users(ids, counts=True)], next_cursor)


def _followers(request: HttpRequest, user_id: str) -> HttpResponse:
    return _users_page(request, user_id, followers_page)


def _following(request: HttpRequest, user_id: str) -> HttpResponse:
    return _users_page(request, user_id, following_page)


def _follows_among(request: HttpRequest, user_id: str) -> HttpResponse:
    """Which of ``?ids=a,b,c`` (at most 100 user IDs) the user follows: one query."""
    user = user_or_404(user_id, counts=False)
    raw = request.GET.get("ids")
    if raw is None:
        raise BadRequest("ids is required: user IDs separated by commas", field="ids")
    parts = raw.split(",") if raw else []
    if len(parts) > MAX_FOLLOWS_IDS:
        raise BadRequest(f"ids takes at most {MAX_FOLLOWS_IDS} user IDs", field="ids")
    candidates = []
    for part in parts:
        try:
            candidates.append(parse_id(part, "user"))
        except NotFoundError:
            raise BadRequest(f"ids: {part[:40]!r} is not a user ID", field="ids") from None
    return ok({"ids": [str(i) for i in followed_among(user["id"], candidates)]})


def _follow(request: HttpRequest, user_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    follow_actions.follow_user(pinner["id"], parse_id(user_id, "user"))
    return no_content()


def _unfollow(request: HttpRequest, user_id: str) -> HttpResponse:
    pinner = require_pinner(request)
    user = user_or_404(user_id, counts=False)
    follow_actions.unfollow_user(pinner["id"], user["id"])
    return no_content()


users = endpoint(POST=_sign_up)
me = endpoint(GET=_me)
password = endpoint(POST=_change_password)
user = endpoint(GET=_get)
by_username = endpoint(GET=_by_username)
boards = endpoint(GET=_boards)
followers = endpoint(GET=_followers)
following = endpoint(GET=_following)
follows = endpoint(GET=_follows_among)
follow = endpoint(PUT=_follow, DELETE=_unfollow)
