"""The search index's backends, held to one set of tests: SQLite FTS5 on the embedded plane,
InnoDB FULLTEXT on MariaDB with ``PINBOARD_TEST_PLANE=servers``. What a pinner types never
breaks a query, words match the same way on both (case, accents, short and common words),
and results come best first: relevance, then the newest."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pinboard.search.index import Document, SearchIndex
from pinboard.search.plane import open_index
from pinboard.search.words import MAX_QUERY, MAX_TERMS, Query, QueryError, parse_query, search_text
from tests.site.conftest import PLANE

OWNER, OTHER = 101, 202


@pytest.fixture(scope="module")
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SearchIndex]:
    """An index of its own on the plane's backend (the site's is shared by the whole run)."""
    if PLANE == "servers":
        servers = request.getfixturevalue("site_servers")
        index = open_index(servers.search.rsplit("/", 1)[0] + "/search_backend_tests")
    else:
        index = open_index(f"sqlite://{tmp_path_factory.mktemp('search') / 'index.sqlite3'}")
    yield index
    index.close()


@pytest.fixture
def index(backend: SearchIndex) -> SearchIndex:
    backend.clear()
    return backend


def doc(
    object_id: int, name: str, body: str = "", *, kind: str = "pin", created: int = 1, **more: Any
) -> Document:
    fields: dict[str, Any] = {"owner_id": OWNER, "board_id": None, "secret": False, **more}
    return Document(
        kind, object_id, search_text(name), search_text(body), created=created, **fields
    )


def filler(n: int = 20) -> list[Document]:
    """Documents of other words: relevance weighs a word by how rare it is, and in a handful
    of documents every word is common (InnoDB then gives no word any weight)."""
    return [doc(10_000 + i, f"filler number {i}", "other words") for i in range(n)]


def find(index: SearchIndex, text: str, *, kind: str = "pin", **options: Any) -> list[int]:
    params: dict[str, Any] = {"viewer_id": None, "as_of": 10**18, "offset": 0, "limit": 50}
    return index.search(kind, parse_query(text), **{**params, **options})


def test_every_word_must_match_and_the_last_may_be_the_start_of_one(index: SearchIndex) -> None:
    index.upsert([doc(1, "Lemon tart", "Desserts"), doc(2, "Lemon cake"), doc(3, "Tartan rug")])
    assert sorted(find(index, "lemon")) == [1, 2]
    assert find(index, "lemon tart") == [1]
    assert find(index, "tart lemon") == [1]  # in any order
    assert find(index, "tart lem") == [1]
    assert sorted(find(index, "tar")) == [1, 3]
    assert find(index, "tar ") == []  # a space ends the last word: no prefix
    assert find(index, "lemon desserts") == [1]  # across the two fields


def test_case_accents_and_punctuation_do_not_matter(index: SearchIndex) -> None:
    index.upsert(
        [
            doc(1, "Crème BRÛLÉE, café-style!"),
            doc(2, "ann_42", kind="user"),
            doc(3, "Straße 12"),
        ]
    )
    assert find(index, "creme brulee") == [1]
    assert find(index, "CAFÉ style") == [1]
    assert find(index, "Ann 42", kind="user") == [2]
    assert find(index, "ann_42", kind="user") == [2]
    assert find(index, "strasse 12") == [3]


def test_short_words_and_common_words_are_found(index: SearchIndex) -> None:
    # InnoDB leaves out words under 3 characters and stopwords unless told otherwise.
    index.upsert([doc(1, "A is for AI"), doc(2, "The art of it"), doc(3, "Aiming")])
    assert find(index, "ai ") == [1]
    assert find(index, "ai") == [1]  # too short to be a prefix as well
    assert find(index, "aim") == [3]
    assert find(index, "a is ") == [1]
    assert find(index, "the of it") == [2]
    assert index.documents("pin", 1, 1)[0].name == "a is for ai"  # as stored, whatever pads it


def test_common_words_are_still_found_after_an_optimize(index: SearchIndex) -> None:
    """InnoDB makes the FULLTEXT indexes again as it rebuilds the table, by the settings of
    the session that asked (a rebuild ends with one)."""
    index.upsert([doc(1, "The art of it"), doc(2, "Other art")])
    index.optimize()
    assert find(index, "the of it") == [1]


def test_query_syntax_in_a_pinners_text_is_only_text(index: SearchIndex) -> None:
    index.upsert([doc(1, "near and or not"), doc(2, "plain words")])
    for text in ['"', 'a" OR "b', "NEAR(a b)", "*", "-plain", "+plain -words", "(", ")",
                 "plain*", "name:plain", "^plain", "plain'", "'); DROP TABLE x; --",
                 "plain\\", "@plain", "plain~ <words >words"]:  # fmt: skip
        try:
            query = parse_query(text)
        except QueryError:
            continue  # nothing to search for: the callers' 400
        index.search("pin", query, viewer_id=None, as_of=10**18, offset=0, limit=5)
    assert find(index, "NEAR AND OR NOT") == [1]
    assert find(index, "+plain -words") == [2]  # the signs are punctuation: both words count
    assert find(index, '"plain" OR "nothing"') == []


def test_the_primary_field_and_whole_words_rank_first(index: SearchIndex) -> None:
    index.upsert(
        [
            *filler(),
            doc(1, "Other things", "Quince board", created=30),
            doc(2, "Quince jelly", "Other board", created=10),
            doc(3, "Quinces in autumn", "", created=20),
        ]
    )
    # The whole word in the primary field first (the newest is last to match it)...
    found = find(index, "quince")
    assert found[0] == 2 and sorted(found) == [1, 2, 3]
    assert find(index, "quince ") == [2, 1]
    # ...and in one field, the whole word before a longer one it starts, newer as that is.
    index.upsert([doc(4, "Cat naps", created=1), doc(5, "Catalog naps", created=99)])
    assert find(index, "cat") == [4, 5]


def test_equally_relevant_documents_come_newest_first(index: SearchIndex) -> None:
    index.upsert(
        filler() + [doc(n, "Fig tart", "Figs", created=[5, 9, 7, 9][n - 1]) for n in (1, 2, 3, 4)]
    )
    assert find(index, "fig") == [4, 2, 3, 1]  # the newest; of the same time, the higher ID


def test_paging_by_offset_and_limit_never_repeats(index: SearchIndex) -> None:
    index.upsert(filler() + [doc(n, "Plum", created=n) for n in range(1, 8)])
    pages = [find(index, "plum", offset=offset, limit=3) for offset in (0, 3, 6)]
    assert pages == [[7, 6, 5], [4, 3, 2], [1]]


def test_a_search_leaves_out_what_was_made_after_it(index: SearchIndex) -> None:
    index.upsert([doc(1, "Pear", created=100), doc(2, "Pear", created=200)])
    assert find(index, "pear", as_of=150) == [1]
    assert find(index, "pear", as_of=200) == [2, 1]


def test_secret_documents_are_found_by_their_owner_only(index: SearchIndex) -> None:
    index.upsert(
        [
            doc(1, "Diary", secret=True, owner_id=OWNER, kind="board"),
            doc(2, "Diary", secret=False, owner_id=OTHER, kind="board"),
        ]
    )
    assert find(index, "diary", kind="board") == [2]
    assert find(index, "diary", kind="board", viewer_id=OTHER) == [2]
    assert sorted(find(index, "diary", kind="board", viewer_id=OWNER)) == [1, 2]


def test_upsert_replaces_and_delete_forgets(index: SearchIndex) -> None:
    first = doc(7, "Old words", "body", board_id=70, created=3)
    index.upsert([first, doc(8, "Other")])
    assert index.documents("pin", 1, 100) == [first, doc(8, "Other")]
    second = doc(7, "New words", "", board_id=71, secret=True, created=3)
    index.upsert([second])
    assert index.documents("pin", 7, 7) == [second]
    assert find(index, "old") == [] and find(index, "new", viewer_id=OWNER) == [7]
    index.delete("pin", [7, 999])
    assert index.documents("pin", 1, 100) == [doc(8, "Other")]
    assert (index.count("pin"), index.count("board")) == (1, 0)
    index.optimize()  # merges what the writes left in pieces, and changes nothing else
    assert index.documents("pin", 1, 100) == [doc(8, "Other")] and find(index, "other") == [8]
    index.delete("pin", [])


def test_kinds_are_apart(index: SearchIndex) -> None:
    index.upsert([doc(1, "Walnut", kind="pin"), doc(2, "Walnut", kind="board")])
    assert find(index, "walnut", kind="pin") == [1]
    assert find(index, "walnut", kind="board") == [2]
    assert find(index, "walnut", kind="user") == []


def test_state_is_kept_by_name(index: SearchIndex) -> None:
    index.set_state("test", "3/16")
    assert index.state("test") == "3/16"
    index.set_state("test", "4/16")
    assert index.state("test") == "4/16"
    index.set_state("test", None)
    assert index.state("test") is None


def test_index_statements_are_counted(index: SearchIndex) -> None:
    index.upsert([doc(1, "Date")])
    with index.count_queries() as counted:
        find(index, "date")
    assert counted.count == 1


def test_what_a_query_is() -> None:
    assert parse_query("  Lemon   TART ") == Query(("lemon", "tart"), prefix=False)
    assert parse_query("lemon lemon tar") == Query(("lemon", "tar"), prefix=True)
    assert parse_query("lemon ta") == Query(("lemon", "ta"), prefix=False)
    assert parse_query("x" * MAX_QUERY).terms == ("x" * 80,)  # a word is at most 80 characters
    assert len(parse_query(" ".join(f"w{n}" for n in range(30))).terms) == MAX_TERMS
    for text, says in [
        ("", "type a word"),
        ("   ", "type a word"),
        (None, "type a word"),
        ("x" * (MAX_QUERY + 1), "at most 200"),
        ("!!! --- ___", "letters or digits"),
    ]:
        with pytest.raises(QueryError, match=says):
            parse_query(text)
