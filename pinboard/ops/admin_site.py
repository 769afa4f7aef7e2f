"""The admin site at /admin/: operators' accounts and a read-only journal; pinners get a 403."""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any, TypeVar, cast

from django.contrib.admin import AdminSite
from django.http import HttpRequest, HttpResponseBase

from .access import refusal, refused

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
            if refused(request):
                return refusal(request)
            return guarded(request, *args, **kwargs)

        return cast(ViewType, update_wrapper(refuse_pinners, guarded))
