"""The signed-in pinner's home feed."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from ...feeds.home import read_home
from .. import serializers
from ..http import PageQuery, endpoint, page, page_params, require_pinner
from ..operations import operation
from ..schemas import PinList


@operation(
    "The pinner's home feed: pins from followed pinners and boards, newest first",
    ok=PinList,
    auth=True,
    query=PageQuery,
)
def _feed(request: HttpRequest) -> HttpResponse:
    pinner = require_pinner(request)
    limit, cursor = page_params(request)
    shown, next_cursor = read_home(pinner["id"], limit=limit, cursor=cursor)
    return page([serializers.pin(p) for p in shown.pins], next_cursor)


feed = endpoint(GET=_feed)
