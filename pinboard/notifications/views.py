"""The notifications page: what others did to the pinner, newest first. Visiting it changes
nothing (a GET a page elsewhere could make the pinner's browser send); its form marks
what the first page showed read (a POST, with the CSRF token)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.timesince import timesince
from django.views.decorators.http import require_http_methods

from ..errors import BadRequest
from ..grid import pin_item
from ..users.auth import signed_in_pinner
from ..views_common import parse_cursor, pinner_required
from .actions import mark_read
from .queries import notifications_page

#: The greatest sequence a form may mark read up to (a signed 64-bit integer).
MAX_SEQUENCE = 2**63 - 1


@require_http_methods(["GET", "HEAD", "POST"])
@pinner_required
def notifications(request: HttpRequest) -> HttpResponse:
    pinner = signed_in_pinner(request)
    if request.method == "POST":
        mark_read(pinner["id"], _up_to(request))  # up to what the page showed, no further
        return redirect("notifications")
    cursor = parse_cursor(request)
    page = notifications_page(pinner["id"], cursor=cursor)
    now = timezone.now()
    for item in page.items:
        if item["pin"] is not None:
            item["pin"] = pin_item(item["pin"])
        recent = (now - item["created_at"]).total_seconds() < 60
        item["ago"] = "just now" if recent else f"{timesince(item['created_at'], now)} ago"
    unread = cursor is None and any(item["unread"] for item in page.items)
    context = {"items": page.items, "next_cursor": page.cursor, "mark_up_to": page.newest if unread else None}  # fmt: skip
    return render(request, "notifications/list.html", context)


def _up_to(request: HttpRequest) -> int:
    raw = request.POST.get("up_to", "")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 19 and 0 < int(raw) <= MAX_SEQUENCE):
        raise BadRequest("up_to: the sequence of the newest notification shown")
    return int(raw)
