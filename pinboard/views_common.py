"""What the page views share: access decorators, form errors, redirects.

Views stay thin: they parse the request, call an action or a query, and hand
plain dicts to a template (pins as grid items: ``grid.py``). Turning domain errors
into 404/403/400/429 responses happens here, once.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from shardstore import InvalidCursor, UnknownShard, cursors

from .errors import BadRequest, DomainError, Forbidden, NotFoundError, RateLimited
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
