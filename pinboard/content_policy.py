"""The Content-Security-Policy header, built once.

The policy is django-csp's, from ``settings.CONTENT_SECURITY_POLICY`` (its system checks
still apply), and it is the same for every response: no nonces, no view changes it.
django-csp's own middleware builds it, and the empty report-only one, again for every
response, which cost about 0.05 to 0.1 ms a request, a tenth of a warm API read's. As
django-csp does, Django's debug pages for a 404 and a 500 (``DEBUG`` only) go without it:
they are styled inline.
"""

from __future__ import annotations

from collections.abc import Callable

from csp.constants import HEADER
from csp.utils import build_policy
from django.conf import settings
from django.http import HttpRequest, HttpResponse

#: The statuses of Django's technical pages under ``DEBUG``.
DEBUG_PAGES = frozenset({404, 500})


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.policy = build_policy()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        debug_page = settings.DEBUG and response.status_code in DEBUG_PAGES
        if self.policy and not debug_page:
            response.headers.setdefault(HEADER, self.policy)
        return response
