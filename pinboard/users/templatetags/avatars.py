"""``{% load avatars %}``: ``{{ person|avatar:60 }}`` fills an avatar's circle with the
pinner's picture at 60 px, or their initial (users/avatars.py)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from ..avatars import SIZES, avatar_face

register = template.Library()


@register.filter
def avatar(person: Any, size: int) -> SafeString | str:
    """``size``: a stored side (60 or 120); an empty string for no pinner."""
    if not person or size not in SIZES:
        return ""
    return mark_safe(avatar_face(person, size))  # avatar_face escapes what it takes in
