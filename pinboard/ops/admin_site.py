"""The admin site at /admin/: operators' accounts and a read-only journal; pinners get a 403."""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any

from django.contrib.admin import AdminSite
from django.http import HttpRequest, HttpResponse

from .access import refusal, refused


class OpsAdminSite(AdminSite):
    site_header = "pinboard operators"
    site_title = "pinboard operators"
    index_title = "Operator accounts and the journal"
    site_url = "/ops/"  # "View site" leads to the console

    def admin_view(
        self, view: Callable[..., HttpResponse], cacheable: bool = False
    ) -> Callable[..., HttpResponse]:
        """Django's guard (staff only, else the log-in), with pinners refused outright."""
        guarded = super().admin_view(view, cacheable)

        def refuse_pinners(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if refused(request):
                return refusal(request)
            return guarded(request, *args, **kwargs)

        return update_wrapper(refuse_pinners, guarded)
