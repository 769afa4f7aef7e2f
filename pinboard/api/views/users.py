"""Pinners: sign up, change a password, read a profile, their boards, followers and
following, follows."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from django.http import HttpRequest, HttpResponse
from msgspec import Meta

from ... import entities, ratelimit
from ...boards.queries import boards_page, get_boards
from ...entities import pinner_stats
from ...errors import BadRequest, Conflict, InvalidField, NotFoundError, RateLimited
from ...follows import actions as follow_actions
from ...follows.queries import followed_among, followers_page, following_page
from ...ids import parse_id
from ...likes.queries import liked_pins
from ...users.actions import (
    MIN_PASSWORD,
    USERNAME,
    change_password,
    delete_account,
    sign_up,
    update_profile,
)
from ...users.queries import get_user, get_user_by_username, get_users
from .. import serializers
from ..http import (
    PageQuery,
    created,
    endpoint,
    json_body,
    no_content,
    ok,
    page,
    page_params,
    require_pinner,
    viewer_id,
)
from ..operations import operation
from ..schemas import (
    MAX_USERNAME,
    About,
    BoardList,
    DisplayName,
    Email,
    FollowedIds,
    Id,
    Me,
    PinList,
    User,
    UserList,
)

#: How many user IDs ``GET /users/{id}/follows?ids=`` checks at once.
MAX_FOLLOWS_IDS = 100

NewPassword = Annotated[
    str,
    Meta(
        min_length=MIN_PASSWORD,
        max_length=256,
        description=f"At least {MIN_PASSWORD} characters, not a common password, not all"
        " digits, not too like the username or email (else a 422 naming the field).",
    ),
]


class NewPinner(TypedDict):
    username: Annotated[str, Meta(max_length=MAX_USERNAME, pattern=f"^{USERNAME.pattern}$")]
    email: Email
    password: NewPassword


class ProfileEdit(TypedDict, total=False):
    display_name: DisplayName
    about: About


class AccountDeletion(TypedDict):
    password: Annotated[str, Meta(max_length=256, description="Your password, to confirm.")]


class PasswordChange(TypedDict):
    old_password: str
    new_password: NewPassword


class FollowsQuery(TypedDict):
    ids: Annotated[
        str,
        Meta(
            pattern="^((0|[1-9][0-9]{0,19})(,(0|[1-9][0-9]{0,19}))*)?$",
            description=f"Up to {MAX_FOLLOWS_IDS} user IDs separated by commas.",
        ),
    ]


def user_or_404(raw_id: str, *, counts: bool = True) -> entities.User:
    user = get_user(parse_id(raw_id, "user"), counts=counts)
    if user is None:
        raise NotFoundError("no such user")
    return user


@operation(
    "Sign up",
    ok=User,
    status=201,
    errors=(Conflict, InvalidField, RateLimited),
    body=NewPinner,
)
def _sign_up(request: HttpRequest) -> HttpResponse:
    ratelimit.check(request, "signup")
    data = json_body(request, NewPinner)
    return created(serializers.user(sign_up(data["username"], data["email"], data["password"])))


@operation("The pinner of the token, with email", ok=Me, errors=(NotFoundError,), auth=True)
def _me(request: HttpRequest) -> HttpResponse:
    pinner = require_pinner(request)
    user = get_user(pinner["id"])
    if user is None:  # deleted between the token check and now
        raise NotFoundError("no such user")
    return ok(serializers.me(user))


@operation(
    "Edit your display name and about text",
    ok=Me,
    errors=(InvalidField,),
    auth=True,
    body=ProfileEdit,
)
def _update_me(request: HttpRequest) -> HttpResponse:
    pinner = require_pinner(request)
    data = json_body(request, ProfileEdit)
    return ok(serializers.me(update_profile(pinner["id"], dict(data))))


@operation(
    "Delete your account at once (its boards, pins and edges follow in the background;"
    " the username stays taken)",
    errors=(InvalidField, RateLimited),
    auth=True,
    body=AccountDeletion,
)
def _delete_me(request: HttpRequest) -> HttpResponse:
    pinner = require_pinner(request)
    data = json_body(request, AccountDeletion)
    with ratelimit.password_attempt(
        request, ratelimit.pinner_key(pinner["id"])
    ):  # a stolen token buys no guesses
        delete_account(pinner["id"], data["password"])
    return no_content()


@operation(
    "Change your password; every API token of yours, this one too, is revoked",
    errors=(InvalidField, RateLimited),
    auth=True,
    body=PasswordChange,
)
def _change_password(request: HttpRequest) -> HttpResponse:
    """Set a new password; every API token of the pinner (this one too) is revoked."""
    pinner = require_pinner(request)
    data = json_body(request, PasswordChange)
    with ratelimit.password_attempt(request, ratelimit.pinner_key(pinner["id"])):
        change_password(pinner["id"], data["old_password"], data["new_password"])
    return no_content()


@operation("A pinner", ok=User, errors=(NotFoundError,))
def _get(request: HttpRequest, user_id: Id) -> HttpResponse:
    return ok(serializers.user(user_or_404(user_id)))


@operation("A pinner by username (case-insensitive)", ok=User, errors=(NotFoundError,))
def _by_username(request: HttpRequest, username: str) -> HttpResponse:
    user = get_user_by_username(username)
    if user is None:
        raise NotFoundError(f"no pinner named {username[:40]!r}")
    return ok(serializers.user(user))


def _boards_page(request: HttpRequest, owner: entities.User, *, secret: bool) -> HttpResponse:
    limit, cursor = page_params(request)
    ids, next_cursor = boards_page(owner["id"], limit=limit, cursor=cursor, secret=secret)
    # (a secret board has no followers: the token's pinner comes without counts)
    owner_followers = pinner_stats(owner).followers
    return page([serializers.board(b, owner_followers) for b in get_boards(ids)], next_cursor)


@operation(
    "A pinner's public boards, newest first",
    ok=BoardList,
    errors=(NotFoundError,),
    query=PageQuery,
)
def _boards(request: HttpRequest, user_id: Id) -> HttpResponse:
    return _boards_page(request, user_or_404(user_id), secret=False)


@operation("Your secret boards, newest first", ok=BoardList, auth=True, query=PageQuery)
def _secret_boards(request: HttpRequest) -> HttpResponse:
    return _boards_page(request, require_pinner(request), secret=True)


def _users_page(request: HttpRequest, user_id: str, list_page: Any) -> HttpResponse:
    user = user_or_404(user_id, counts=False)
    limit, cursor = page_params(request)
    ids, next_cursor = list_page(user["id"], limit=limit, cursor=cursor)
    return page([serializers.user(u) for u in get_users(ids, counts=True)], next_cursor)


@operation(
    "Who follows the pinner, newest first", ok=UserList, errors=(NotFoundError,), query=PageQuery
)
def _followers(request: HttpRequest, user_id: Id) -> HttpResponse:
    return _users_page(request, user_id, followers_page)


@operation(
    "Whom the pinner follows, newest first", ok=UserList, errors=(NotFoundError,), query=PageQuery
)
def _following(request: HttpRequest, user_id: Id) -> HttpResponse:
    return _users_page(request, user_id, following_page)


@operation(
    "The pins the pinner liked, the latest like first",
    ok=PinList,
    errors=(NotFoundError,),
    query=PageQuery,
)
def _likes(request: HttpRequest, user_id: Id) -> HttpResponse:
    user = user_or_404(user_id, counts=False)
    limit, cursor = page_params(request)
    shown, next_cursor = liked_pins(viewer_id(request), user["id"], limit=limit, cursor=cursor)
    return page([serializers.pin(p) for p in shown.pins], next_cursor)


@operation(
    f"Which of up to {MAX_FOLLOWS_IDS} given users the pinner follows (one query);"
    " a malformed or non-user ID in `ids` is a 400",
    ok=FollowedIds,
    errors=(NotFoundError,),
    query=FollowsQuery,
)
def _follows_among(request: HttpRequest, user_id: Id) -> HttpResponse:
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


@operation(
    "Follow the pinner (and so all their boards, present and future)",
    errors=(NotFoundError, InvalidField),
    auth=True,
)
def _follow(request: HttpRequest, user_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    follow_actions.follow_user(pinner["id"], parse_id(user_id, "user"))
    return no_content()


@operation("Unfollow the pinner (and so all their boards)", errors=(NotFoundError,), auth=True)
def _unfollow(request: HttpRequest, user_id: Id) -> HttpResponse:
    pinner = require_pinner(request)
    user = user_or_404(user_id, counts=False)
    follow_actions.unfollow_user(pinner["id"], user["id"])
    return no_content()


users = endpoint(POST=_sign_up)
me = endpoint(GET=_me, PATCH=_update_me, DELETE=_delete_me)
password = endpoint(POST=_change_password)
user = endpoint(GET=_get)
by_username = endpoint(GET=_by_username)
boards = endpoint(GET=_boards)
secret_boards = endpoint(GET=_secret_boards)
followers = endpoint(GET=_followers)
following = endpoint(GET=_following)
likes = endpoint(GET=_likes)
follows = endpoint(GET=_follows_among)
follow = endpoint(PUT=_follow, DELETE=_unfollow)
