"""The ``avatars`` template library of pinboard's templates, for this build's pinners:
``{{ person|avatar:60 }}`` is the picture at that side, or the initial when there is none,
as pinboard draws it."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from .models import Pinner

register = template.Library()


@register.filter
def avatar(person: Pinner | None, size: int) -> SafeString | str:
    if person is None:
        return ""
    url = person.avatar_urls().get(size)
    if url is None:
        return person.username[:1].upper()
    return format_html('<img src="{}" alt="" width="{}" height="{}">', url, size, size)
