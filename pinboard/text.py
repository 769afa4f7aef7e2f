"""What a pinner's text may hold: one rule for every text field, on the pages and the API.

Control characters (C0, DEL and C1) are refused: a NUL cuts strings short in C
libraries and logs, and the others can hide or rewrite text in terminals and
feeds. Multi-line fields (descriptions, comments, about) keep line breaks and
tabs; one-line fields (names, titles, usernames, emails, links) keep none.
Lone surrogates are not text at all (JSON's ``\\u`` escapes can spell them).
Each ``clean_*`` function of the apps' actions passes its field through here; a
board's and a pin's description share one cleaner, ``clean_description``.
"""

from __future__ import annotations

import re

from .errors import InvalidField

_NOT_IN_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
# The same, less tab (09), line feed (0a) and carriage return (0d).
_NOT_IN_MULTI_LINE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_LINE_BREAKS_AND_TABS = "\n\r\t"


def one_line(value: str, field: str) -> str:
    """``value`` if it holds no control character at all; InvalidField on ``field`` if it does."""
    match = _NOT_IN_ONE_LINE.search(value)
    if match:
        raise _refusal(match.group(), field)
    return value


def multi_line(value: str, field: str) -> str:
    """``value`` if its only control characters are line breaks and tabs."""
    match = _NOT_IN_MULTI_LINE.search(value)
    if match:
        raise _refusal(match.group(), field)
    return value


def clean_description(description: object, *, most: int) -> str:
    """A board's or a pin's description: multi-line, at most ``most`` characters, without
    the whitespace around it. None (a form or body without one) is the empty one."""
    if description is None:
        return ""
    if not isinstance(description, str) or len(description) > most:
        raise InvalidField(f"description must be at most {most} characters", field="description")
    return multi_line(description, "description").strip()


def _refusal(char: str, field: str) -> InvalidField:
    if "\ud800" <= char <= "\udfff":
        return InvalidField(f"{field} holds a lone surrogate, which is not text", field=field)
    if char in _LINE_BREAKS_AND_TABS:
        return InvalidField(f"{field} must be one line, without line breaks or tabs", field=field)
    return InvalidField(
        f"{field} must not contain control characters (found U+{ord(char):04X})", field=field
    )
