"""Each request runs on one version of the config, from its first query to its last."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from .data_plane import bound


class DataPlaneMiddleware:
    """The request's thread bound to the data plane in force when it began (``bound()``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with bound():
            return self.get_response(request)
