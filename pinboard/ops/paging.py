"""Page numbers of the console's long lists (a host's shards, the journal, history).

``?page=N``: a malformed number is a 400, a number past the last page a 404,
never a 500 (``int("9" * 5000)`` would be one: Python refuses to convert it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.paginator import EmptyPage, Page, Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest

from ..errors import BadRequest

#: More digits than any page count the console will ever have.
MAX_DIGITS = 9


def page_of(request: HttpRequest, items: Sequence[Any] | QuerySet[Any], per_page: int) -> Page[Any]:
    """The page of ``items`` that ``?page=`` names (the first by default)."""
    raw = request.GET.get("page", "1")
    if not (raw.isascii() and raw.isdigit()) or len(raw) > MAX_DIGITS or raw[0] == "0":
        raise BadRequest("page must be a page number: 1, 2, 3, ...")
    paginator = Paginator(items, per_page, allow_empty_first_page=True)
    try:
        return paginator.page(int(raw))
    except EmptyPage:
        raise Http404(f"there are {paginator.num_pages} pages") from None
