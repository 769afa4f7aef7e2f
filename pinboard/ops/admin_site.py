"""The admin site at /admin/: operators' accounts and a read-only journal; pinners get a 403.
Its log-in is rate-limited as every password is (``ratelimit``); a staff session ends hours
after its log-in (``reauth.py``); a change to a staff account or group asks for the
password again and is journaled (``staff_accounts.py``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any, TypeVar, cast

from django.contrib.admin import AdminSite
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponseBase
from django.template.response import TemplateResponse

from .. import ratelimit
from ..errors import RateLimited
from ..http_errors import status_page
from . import reauth, staff_accounts
from .access import is_operator, refusal, refused

ViewType = TypeVar("ViewType", bound=Callable[..., HttpResponseBase])


class OpsAdminSite(AdminSite):
    site_header = "pinboard operators"
    site_title = "pinboard operators"
    index_title = "Operator accounts and the journal"
    site_url = "/ops/"  # "View site" leads to the console

    def admin_view(self, view: ViewType, cacheable: bool = False) -> ViewType:
        """Django's guard (staff only, else the log-in), with pinners refused outright."""
        guarded = super().admin_view(view, cacheable)

        def refuse_pinners(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if is_operator(request) and reauth.session_expired(request):
                logout(request)  # hours after its log-in: the staff log-in again
            if refused(request):
                return refusal(request)
            if staff_accounts.needs_confirmation(request):
                return staff_accounts.ask_password(request)
            return guarded(request, *args, **kwargs)

        return cast(ViewType, update_wrapper(refuse_pinners, guarded))

    def password_change(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> TemplateResponse:
        """The signed-in account's own password (in sudo mode: ``admin_view``), journaled."""
        response = super().password_change(request, extra_context)
        if request.method == "POST" and response.status_code == 302:  # on to "done": changed
            staff_accounts.record_own_password_change(request)
        return response

    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        """The staff log-in, its password guesses limited as the site's (``ratelimit``)."""
        if request.method != "POST":
            return super().login(request, extra_context)
        account = reauth.staff_account_key(str(request.POST.get("username", "")))
        try:
            ratelimit.check_password(request, account)
        except RateLimited as refused_now:
            return status_page(request, refused_now)
        response = super().login(request, extra_context)
        if not request.user.is_authenticated:  # the form again: a wrong password
            ratelimit.password_failed(request, account)
        return response
