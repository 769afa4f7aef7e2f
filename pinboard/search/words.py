"""Words, as search sees them: in the text it indexes and in what a pinner types.

Both backends index the text this module makes, never a pinner's own: case folded,
accents taken off, cut into words of letters and digits (anything else, the
underscore of a username included, separates words). So SQLite's and MariaDB's
tokenizers, which differ on punctuation, case and accents, see the same words.

A query is the same words, each of which must match. The last one also matches as a
prefix (unless a space ends the query), so that what a pinner is still typing finds
something; the whole word still ranks first. A prefix is at least ``MIN_PREFIX``
characters: a shorter one would start too many words to rank their documents quickly. A pinner's text never reaches a backend's query syntax as written: the
backends spell each word as a quoted term, and a word holds letters and digits only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

#: The longest query taken, in characters.
MAX_QUERY = 200
#: The words of a query that count; those past them are left out.
MAX_TERMS = 12
#: The shortest last word that also matches as a prefix.
MIN_PREFIX = 3
#: The longest word indexed: InnoDB leaves out words over 84 characters, and SQLite then
#: must too (longer ones are cut to this length, in the text and in queries alike).
MAX_WORD = 80

_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """The words of ``text``: case folded, without accents, in order."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    bare = "".join(char for char in folded if not unicodedata.combining(char))
    return [word[:MAX_WORD] for word in _WORD.findall(bare)]


def search_text(*parts: str) -> str:
    """What the index stores of some text: its words, one space apart."""
    return " ".join(word for part in parts for word in words(part))


class QueryError(ValueError):
    """A query there is nothing to search for: empty, too long, or without a word."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Query:
    """Words that must all match; the last also as a prefix if ``prefix``."""

    terms: tuple[str, ...]
    prefix: bool = True


def parse_query(text: object) -> Query:
    """The query a pinner typed; QueryError (with a message for them) if there is none."""
    if not isinstance(text, str) or not text.strip():
        raise QueryError("type a word or two to search for")
    if len(text) > MAX_QUERY:
        raise QueryError(f"a search is at most {MAX_QUERY} characters")
    terms = tuple(dict.fromkeys(words(text)))[:MAX_TERMS]
    if not terms:
        raise QueryError("search for words: letters or digits")
    return Query(terms, prefix=not text[-1].isspace() and len(terms[-1]) >= MIN_PREFIX)
