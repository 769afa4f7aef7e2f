"""The signed-out pages, rendered with pinboard's own templates from the same context keys,
so both builds send the same HTML for the same data: a profile with its board cards, a
board with its newest pins, a pin with its comments. Two queries each.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.core.exceptions import BadRequest
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import conditional_escape, escape
from django.utils.safestring import SafeString, mark_safe

from pinboard.grid import CARD_SIZES  # the same markup: the cards' srcset sizes

from .api import object_id
from .avatars import avatar
from .models import Board, Comment, Pin, Pinner, media_url
from .paging import InvalidCursor, keyset_page
from .queries import with_cover

M = TypeVar("M", bound=Model)

PAGE = 50


def pin_item(pin: Pin) -> dict[str, Any]:
    """What pinboard's pin page reads of a pin (pinboard.grid.pin_item's keys)."""
    return {
        "id": pin.pk,
        "description": pin.description,
        "link": pin.link,
        "saved_from": pin.saved_from_id,
        "image": {"width": pin.width, "height": pin.height},
        "image_url": pin.image_url,
    }


def grid_items(pins: list[Pin], board: Board) -> list[dict[str, SafeString]]:
    """Pins for pinboard's grid (pins/_grid.html), which shows each one's ``card``: the pins
    of ``board``, each naming it and its owner (``board.owner``, read with it)."""
    pin_url = reverse("pin", args=["0"])[:-2] + "%d/"  # one reverse per grid
    credit = board_credit(board)
    return [{"card": pin_card(pin, pin_url % pin.pk, credit)} for pin in pins]


def board_credit(board: Board) -> str:
    """The line under each card of a board: its owner (avatar, name) and the board."""
    owner = board.owner
    profile = reverse("profile", args=[owner.username])
    return (
        f'<p class="credit"><a class="credit-pinner" href="{profile}">'
        f'<span class="avatar tiny" aria-hidden="true">{conditional_escape(avatar(owner, 60))}</span>'
        f'<span class="credit-name">{escape(owner.display_name or owner.username)}</span></a>'
        f'<a class="credit-board" href="{reverse("board", args=[owner.username, board.slug])}">'
        f"{escape(board.name)}</a></p>"
    )


def pin_card(pin: Pin, url: str, credit: str) -> SafeString:
    """One pin of a grid, with pinboard's markup, built in Python as pinboard builds it."""
    alt = escape(truncate(pin.description or "Pin", 100))
    caption = (
        f'<span class="pin-caption">{escape(truncate(pin.description, 90))}</span>'
        if pin.description
        else ""
    )
    sharper = pin.thumbnail_2x_url
    srcset = (
        f' srcset="{escape(pin.thumbnail_url)} {pin.thumbnail_width}w,'
        f' {escape(sharper)} {pin.thumbnail_2x_width}w" sizes="{CARD_SIZES}"'
        if sharper
        else ""
    )
    return mark_safe(  # every value is escaped
        f'<div class="pin-card"><a class="pin" href="{url}"><img src="{escape(pin.thumbnail_url)}"'
        f'{srcset} width="{pin.thumbnail_width}" height="{pin.thumbnail_height}" alt="{alt}"'
        f' loading="lazy">{caption}</a>{credit}</div>'
    )


def truncate(text: str, length: int) -> str:
    """At most ``length`` characters, the last one an ellipsis if cut (as ``truncatechars``)."""
    return text if len(text) <= length else text[: length - 1] + "\u2026"


def board_card(board: Board, owner: Pinner) -> dict[str, Any]:
    """A board of a profile: its counts and its newest pin's thumbnail as cover."""
    cover = {"thumb_url": media_url(board.cover_key)} if board.cover_key else None
    return {
        "name": board.name,
        "slug": board.slug,
        "owner_username": owner.username,
        "pin_count": board.pin_count,
        "follower_count": board.follower_count,
        "cover": cover,
    }


def _page(
    rows: QuerySet[M], cursor: str | None, *, newest_first: bool = True
) -> tuple[list[M], str | None]:
    try:
        return keyset_page(rows, limit=PAGE, cursor=cursor, newest_first=newest_first)
    except InvalidCursor:
        raise BadRequest("this page's cursor is not one of ours") from None


def profile(request: HttpRequest, username: str) -> HttpResponse:
    user = Pinner.objects.filter(username=username).first()
    if user is None:
        raise Http404("no such pinner")
    boards = with_cover(Board.objects.filter(owner=user, secret=False))
    found, next_cursor = _page(boards, request.GET.get("cursor") or None)
    context = {
        "profile": user,
        "stats": {
            "followers": user.follower_count,
            "following": user.following_count,
            "boards": user.board_count,
            "pins": user.pin_count,
            "likes": user.like_count,
        },
        "boards": [board_card(board, user) for board in found],
        "next_cursor": next_cursor,
        "following": None,
    }
    return render(request, "users/profile.html", context)


def board(request: HttpRequest, username: str, slug: str) -> HttpResponse:
    rows = Board.objects.select_related("owner")
    found_board = rows.filter(owner__username=username, slug=slug).first()
    if found_board is None:
        raise Http404("no such board")
    pins, next_cursor = _page(found_board.pins.all(), request.GET.get("cursor") or None)
    grid = {"pins": grid_items(pins, found_board), "next_cursor": next_cursor}
    if request.GET.get("partial"):
        return render(request, "pins/_grid.html", grid)
    context = {
        **grid,
        "board": found_board,
        "owner": found_board.owner,
        "pin_count": found_board.pin_count,
        "follower_count": found_board.follower_count,
        "following": None,
        "is_owner": False,
    }
    return render(request, "boards/detail.html", context)


def pin(request: HttpRequest, pin_id: str) -> HttpResponse:
    pk = object_id(pin_id)
    rows = Pin.objects.select_related("board", "owner")
    found = rows.filter(pk=pk).first() if pk is not None else None
    if found is None:
        raise Http404("no such pin")
    comments = Comment.objects.filter(pin=found).select_related("author")
    page, comments_cursor = _page(comments, request.GET.get("comments") or None, newest_first=False)
    context = {
        "pin": pin_item(found),
        "board": found.board,
        "owner": found.owner,
        "comments": page,
        "comments_cursor": comments_cursor,
        "liked": False,
        "my_boards": [],
        "is_owner": False,
        "counts": {
            "likes": found.like_count,
            "saves": found.save_count,
            "comments": found.comment_count,
        },
    }
    return render(request, "pins/detail.html", context)


def not_in_this_build(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Pages pinboard's templates link to that the comparison does not serve."""
    raise Http404("not served by this build")
