"""The notifications page: what others did to the pinner, newest first; visiting it (a GET
of its first page) marks them read."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.timesince import timesince
from django.views.decorators.http import require_safe

from ..grid import pin_item
from ..users.auth import signed_in_pinner
from ..views_common import parse_cursor, pinner_required
from .actions import mark_read
from .queries import notifications_page


@require_safe
@pinner_required
def notifications(request: HttpRequest) -> HttpResponse:
    pinner = signed_in_pinner(request)
    cursor = parse_cursor(request)
    page = notifications_page(pinner["id"], cursor=cursor)
    if request.method == "GET" and cursor is None and page.newest is not None:
        mark_read(pinner["id"], page.newest)  # up to what this visit showed, no further
    now = timezone.now()
    for item in page.items:
        if item["pin"] is not None:
            item["pin"] = pin_item(item["pin"])
        recent = (now - item["created_at"]).total_seconds() < 60
        item["ago"] = "just now" if recent else f"{timesince(item['created_at'], now)} ago"
    context = {"items": page.items, "next_cursor": page.cursor}
    return render(request, "notifications/list.html", context)
