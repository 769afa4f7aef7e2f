"""The signed-in pinner's notifications, and marking them read."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from ...entities import pinner_stats
from ...notifications.actions import mark_read
from ...notifications.kinds import BOARD_FOLLOW
from ...notifications.queries import notifications_page, unread_count
from ...users.queries import get_user
from .. import serializers
from ..http import PageQuery, endpoint, no_content, ok, page_params, require_pinner
from ..operations import operation
from ..schemas import NotificationList


@operation(
    "Your notifications, newest first: who liked, saved or commented on your pins, and who"
    " followed you or your boards (reading them does not mark them read)",
    ok=NotificationList,
    auth=True,
    query=PageQuery,
)
def _list(request: HttpRequest) -> HttpResponse:
    pinner = require_pinner(request)
    limit, cursor = page_params(request)
    page = notifications_page(pinner["id"], limit=limit, cursor=cursor, counts=True)
    followers = 0
    if any(item["kind"] == BOARD_FOLLOW for item in page.items):  # a board's count needs it
        me = get_user(pinner["id"])
        followers = pinner_stats(me).followers if me else 0
    items = [serializers.notification(item, followers) for item in page.items]
    body = {"items": items, "next": page.cursor, "unread_count": unread_count(pinner["id"])}
    return ok(body)


@operation("Mark every notification you have read", auth=True)
def _read(request: HttpRequest) -> HttpResponse:
    mark_read(require_pinner(request)["id"])
    return no_content()


notifications = endpoint(GET=_list)
read = endpoint(POST=_read)
