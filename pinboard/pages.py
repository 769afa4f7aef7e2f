"""What the page views share: access decorators, form errors, redirects, grid items.

Views stay thin: they parse the request, call an action or a query, and hand
plain dicts to a template. Turning domain errors into 404/403/400/429 responses and
pin dicts into grid items with image URLs happens here, once.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from html import escape as html_escape
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString, mark_safe

from shardstore import InvalidCursor, UnknownShard

from .boards.queries import boards_page, follower_count, get_boards
from .errors import BadRequest, DomainError, Forbidden, NotFoundError, RateLimited
from .pins.images import image_url
from .store import get_store
from .users.auth import get_pinner

View = Callable[..., HttpResponse]


def page_errors(view: View) -> View:
    """The one place pages turn domain errors into responses.

    Unknown or malformed IDs and slugs are 404s (a well-formed ID on a shard the
    topology does not have is unknown too); other people's things are 403s; a
    malformed cursor or other bad request is a 400 page; too many attempts is a
    429 page with ``Retry-After``.
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except (NotFoundError, UnknownShard) as error:
            raise Http404(str(error)) from None
        except Forbidden as error:
            raise PermissionDenied(error.message) from None
        except InvalidCursor:
            message = "This page's cursor is not one of ours: start from the first page."
            return render(request, "400.html", {"message": message}, status=400)
        except BadRequest as error:
            return render(request, "400.html", {"message": error.message}, status=400)
        except RateLimited as error:
            response = render(request, "429.html", {"message": error.message}, status=429)
            return with_retry_after(response, error)

    return wrapper


def with_retry_after(response: HttpResponse, error: DomainError | None) -> HttpResponse:
    """``response`` with the ``Retry-After`` header when ``error`` says when to retry."""
    if error is not None and error.retry_after is not None:
        response["Retry-After"] = str(error.retry_after)
    return response


def pinner_required(view: View) -> View:
    """Send signed-out visitors to the log-in page, and back here (or to ``next``) after."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if get_pinner(request) is None:
            back = request.get_full_path() if request.method == "GET" else next_url(request, "/")
            return redirect(f"{reverse('login')}?{urlencode({'next': back})}")
        return view(request, *args, **kwargs)

    return wrapper


def next_url(request: HttpRequest, default: str) -> str:
    """The ``next`` the form or query names, if it stays on this site; else ``default``."""
    candidate = request.POST.get("next") or request.GET.get("next")
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return default


def form_errors(error: DomainError, default_field: str = "form") -> dict[str, str]:
    """``{field: message}`` for a form, from the field a domain error names."""
    return {error.field or default_field: error.message}


def act(request: HttpRequest, action: Callable[[], object], default_next: str) -> HttpResponse:
    """Run a button's action, flash what it refused, and redirect (post/redirect/get).

    Unknown targets and other people's things still raise, for ``page_errors``;
    errors that name a form field (a bad board choice) are flashed like the rest.
    """
    try:
        action()
    except RateLimited:
        raise  # a 429 page, from page_errors
    except (NotFoundError, Forbidden) as error:
        if error.field is None:
            raise
        messages.error(request, error.message)
    except DomainError as error:
        messages.error(request, error.message)
    return redirect(next_url(request, default_next))


def parse_cursor(request: HttpRequest) -> str | None:
    return request.GET.get("cursor") or None


# -- grid items -------------------------------------------------------------


def pin_item(pin: dict[str, Any]) -> dict[str, Any]:
    """A pin with the URLs of its image and thumbnail, ready for a template."""
    image = pin["image"]
    return {
        **pin,
        "image_url": image_url(image["key"]),
        "thumb_url": image_url(image["thumbnail_key"]),
    }


def pin_items(pins: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pins for a grid, each with its ``card``: the grid's HTML for it (pins/_grid.html)."""
    pin_url = reverse("pin", args=["0"])[:-2] + "%d/"  # "/pin/%d/": one reverse per grid
    items = []
    for pin in pins:
        item = pin_item(pin)
        item["card"] = pin_card(item, pin_url % pin["id"])
        items.append(item)
    return items


def pin_card(item: dict[str, Any], url: str) -> SafeString:
    """One pin of a grid, built in Python: a page holds 50, and the template language
    spent most of a board page's time on them (a lookup, a filter, a tag per attribute).
    ``html.escape`` is what Django's escape filter runs, without its lazy-string wrapping."""
    image = item["image"]
    description = item.get("description", "")
    alt = html_escape(truncate(description or "Pin", 100))
    caption = (
        f'<span class="pin-caption">{html_escape(truncate(description, 90))}</span>'
        if description
        else ""
    )
    width = html_escape(str(image.get("thumbnail_width", "")))
    height = html_escape(str(image.get("thumbnail_height", "")))
    return mark_safe(  # every value is escaped
        f'<a class="pin" href="{url}"><img src="{html_escape(item["thumb_url"])}"'
        f' width="{width}" height="{height}" alt="{alt}" loading="lazy">{caption}</a>'
    )


def truncate(text: str, length: int) -> str:
    """At most ``length`` characters, the last one an ellipsis if cut (as ``truncatechars``)."""
    return text if len(text) <= length else text[: length - 1] + "\u2026"


def board_items(
    owner: dict[str, Any], *, cursor: str | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    """A page of a pinner's boards, each with its newest pin as cover and its counts.

    The seeds' "Loading a Page": user_has_boards, boards by IN (with counts),
    board_has_pins for every board in one query, cover pins by IN. Four round
    trips on the owner's shard, however many boards and pins. ``owner`` must
    carry its counts (a board's followers include its owner's).
    """
    page = boards_page(owner["id"], cursor=cursor)
    boards = get_boards(page.ids)
    store = get_store()
    covers = store.mapping("board_has_pins").page_many([b["id"] for b in boards], limit=1)
    cover_ids = [covers[b["id"]].ids[0] for b in boards if covers[b["id"]].ids]
    cover_pins = {pin["id"]: pin for pin in store.objects("pin").get_many(cover_ids)}
    owner_followers = owner["counts"]["user_followed_by_users"]
    items = []
    for board in boards:
        first = covers[board["id"]].ids[:1]
        cover = cover_pins.get(first[0]) if first else None
        items.append(
            {
                **board,
                "owner_username": owner["username"],
                "cover": pin_item(cover) if cover else None,
                "pin_count": board["counts"]["board_has_pins"],
                "follower_count": follower_count(board, owner_followers),
            }
        )
    return items, page.cursor


def user_stats(user: dict[str, Any]) -> dict[str, int]:
    counts = user["counts"]
    return {
        "followers": counts["user_followed_by_users"],
        "following": counts["user_follows_users"],
        "boards": counts["user_has_boards"],
        "pins": counts["user_has_pins"],
    }
