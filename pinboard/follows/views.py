"""Follow and unfollow buttons for pinners (boards' buttons are in boards.views)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from ..ids import parse_id
from ..users.auth import signed_in_pinner
from ..views_common import act, pinner_required
from .actions import follow_user, unfollow_user


@require_POST
@pinner_required
def follow(request: HttpRequest, user_id: str) -> HttpResponse:
    me, target = signed_in_pinner(request)["id"], parse_id(user_id, "user")
    return act(request, lambda: follow_user(me, target), "/")


@require_POST
@pinner_required
def unfollow(request: HttpRequest, user_id: str) -> HttpResponse:
    me, target = signed_in_pinner(request)["id"], parse_id(user_id, "user")
    return act(request, lambda: unfollow_user(me, target), "/")
