"""What the page views share: access decorators, form errors, redirects.

Views stay thin: they parse the request, call an action or a query, and hand
plain dicts to a template (pins as grid items: ``grid.py``). What they raise
becomes a 404/403/400/429/503 page in one place, ``http_errors``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from shardstore import InvalidCursor, cursors

from .errors import DomainError, Forbidden, NotFoundError, RateLimited
from .users.auth import get_pinner

View = Callable[..., HttpResponse]


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

    Unknown targets and other people's things still raise, for ``http_errors``;
    errors that name a form field (a bad board choice) are flashed like the rest.
    """
    try:
        action()
    except RateLimited:
        raise  # a 429 page, from http_errors
    except (NotFoundError, Forbidden) as error:
        if error.field is None:
            raise
        messages.error(request, error.message)
    except DomainError as error:
        messages.error(request, error.message)
    return redirect(next_url(request, default_next))


def parse_cursor(request: HttpRequest, may_see: Callable[[], object] | None = None) -> str | None:
    """The page's ``cursor``; InvalidCursor if it is not one of ours, once ``may_see`` has
    raised NotFoundError if the viewer may not see what it pages through (a 400 for a
    secret board where a missing one is a 404 would tell that it exists)."""
    cursor = request.GET.get("cursor") or None
    if cursor is not None and may_see is not None:
        try:
            cursors.decode(cursor)
        except InvalidCursor:
            may_see()
            raise
    return cursor
