"""Who may use the console: operators (Django staff accounts), never pinners.

Operators and pinners are different people with different accounts: an
operator is a Django auth user with ``is_staff`` in the control database; a
pinner is a user object in the shard store (``pinboard/users/auth.py``).
Anyone signed in as neither is sent to the staff log-in; a pinner (or a
non-staff account) is refused with a 403, so no pinner session can be
turned into a way in. A staff session ends hours after its log-in
(``reauth.py``); what each staff account may run is its role's (``roles.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from ..users.auth import get_pinner
from . import reauth

View = Callable[..., HttpResponse]


def is_operator(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_active and user.is_staff)


def refused(request: HttpRequest) -> bool:
    """Signed in, but not as an operator: a pinner, or a staff-less account."""
    if is_operator(request):
        return False
    return bool(request.user.is_authenticated) or get_pinner(request) is not None


def refusal(request: HttpRequest) -> HttpResponse:
    return render(request, "ops/refused.html", status=403)


def no_role(request: HttpRequest, role: str) -> HttpResponse:
    """A staff account whose roles do not run this (``roles.py``): a 403 naming the role."""
    return render(request, "ops/no_role.html", {"role": role}, status=403)


def staff_required(view: View) -> View:
    """Operators get the page; pinners a 403; anyone else the staff log-in, then back here."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if is_operator(request) and reauth.session_expired(request):
            logout(request)  # hours after its log-in: the staff log-in again
        if is_operator(request):
            return view(request, *args, **kwargs)
        if refused(request):
            return refusal(request)
        return redirect_to_login(request.get_full_path(), reverse("admin:login"))

    return wrapper
