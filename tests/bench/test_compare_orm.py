"""The plain Django-ORM build (bench/compare/orm), and the same with cacheops, against
pinboard, on the same data.

A private MariaDB holds pinboard's shards, filled through pinboard's own actions (a small
cast: pins over two pages, a save, likes, comments, follows of pinners and of boards, a
board unfollow, a deleted pin), and the ORM build's database beside them, filled by
``copy_into_orm``. pinboard answers in this process; the ORM build, which has settings of
its own, in a subprocess (``python -m bench.compare.orm fetch``). Every read endpoint must
give the same items with the same fields and values, page after page (cursors differ),
the pages the same HTML, and the writes the same statuses and counts. The cached build
must give them from its cache too, and see the writes made through it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .orm_world import ORM_DATABASE, Cast, OrmBuild, pinboard

# -- reads ----------------------------------------------------------------------------------


def read_paths(cast: Cast) -> list[tuple[str, str | None]]:
    """(path, viewer's token) of every read endpoint, on the cast's pinners, boards and pins."""
    ann, bob, cat, dan = (cast.id(n) for n in ("ann", "bob", "cat", "dan"))
    recipes, garden, empty, bobs = (cast.id(n) for n in ("recipes", "garden", "empty", "bobs"))
    liked, saved, tomatoes = cast.id("recipe10"), cast.id("saved"), cast.id("tomatoes")
    token = cast.tokens
    return [
        *((f"/api/v1/users/{u}", None) for u in (ann, bob, cat, dan)),
        (f"/api/v1/users/{ann}/boards", None),
        (f"/api/v1/users/{ann}/boards?limit=2", None),
        (f"/api/v1/users/{bob}/boards", None),
        *((f"/api/v1/boards/{b}", None) for b in (recipes, garden, empty, bobs)),
        (f"/api/v1/boards/{recipes}/pins", None),
        (f"/api/v1/boards/{recipes}/pins?limit=20", None),
        (f"/api/v1/boards/{garden}/pins", None),
        (f"/api/v1/boards/{empty}/pins", None),
        *((f"/api/v1/pins/{p}", None) for p in (liked, saved, tomatoes)),
        (f"/api/v1/pins/{liked}/comments", None),
        (f"/api/v1/pins/{liked}/comments?limit=2", None),
        (f"/api/v1/pins/{tomatoes}/comments", None),
        (f"/api/v1/pins/{liked}/likes", None),
        (f"/api/v1/pins/{liked}/likes?limit=2", None),
        (f"/api/v1/pins/{saved}/likes", None),
        ("/api/v1/feed", token["bob"]),
        ("/api/v1/feed?limit=20", token["bob"]),
        ("/api/v1/feed", token["cat"]),
        ("/api/v1/feed", token["dan"]),
    ]


def next_page(path: str, cursor: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}cursor={cursor}"


def orm_pages(orm: OrmBuild, paths: list[tuple[str, str | None]]) -> list[list[dict[str, Any]]]:
    """Every page of each path, from the ORM build: one subprocess per round of pages."""
    pages: list[list[dict[str, Any]]] = [[] for _ in paths]
    pending = {n: path for n, (path, _) in enumerate(paths)}
    while pending:
        found = orm.fetch([{"path": p, "token": paths[n][1]} for n, p in pending.items()])
        following = {}
        for (n, path), answer in zip(pending.items(), found, strict=True):
            assert answer["status"] == 200, (path, answer)
            pages[n].append(answer["json"])
            if answer["json"].get("next"):
                following[n] = next_page(paths[n][0], answer["json"]["next"])
        pending = following
    return pages


def pinboard_pages(path: str, token: str | None) -> list[dict[str, Any]]:
    pages = []
    current: str | None = path
    while current is not None:
        status, body = pinboard("GET", current, token)
        assert status == 200, (current, body)
        pages.append(body)
        current = next_page(path, body["next"]) if body.get("next") else None
    return pages


BUILDS = ["orm", "cached_orm"]


@pytest.mark.parametrize("build", BUILDS)
def test_every_read_endpoint_answers_as_pinboard_does(
    cast: Cast, build: str, request: pytest.FixtureRequest
) -> None:
    """Twice on the cached build: as it fills its cache, then from it."""
    orm: OrmBuild = request.getfixturevalue(build)
    paths = read_paths(cast)
    answers = orm_pages(orm, paths)
    if build == "cached_orm":
        assert orm_pages(orm, paths) == answers
    for (path, token), theirs in zip(paths, answers, strict=True):
        ours = pinboard_pages(path, token)
        # The same items on each page, and the last page where pinboard's ends.
        assert [page.get("items", page) for page in theirs] == [
            page.get("items", page) for page in ours
        ], path
        assert [page.get("next") is None for page in theirs] == [
            page.get("next") is None for page in ours
        ], path


def test_the_cast_covers_what_the_endpoints_must_get_right(cast: Cast, orm: OrmBuild) -> None:
    """The comparison above means something: pages, counts and feeds are not trivial."""
    recipes = orm.get(f"/api/v1/boards/{cast.id('recipes')}/pins")["json"]
    assert len(recipes["items"]) == 50 and recipes["next"]
    assert str(cast.deleted_pin) not in {p["id"] for p in recipes["items"]}
    liked = orm.get(f"/api/v1/pins/{cast.id('recipe10')}")["json"]
    assert (liked["like_count"], liked["save_count"], liked["comment_count"]) == (3, 1, 3)
    garden = orm.get(f"/api/v1/boards/{cast.id('garden')}")["json"]
    assert garden["follower_count"] == 1  # ann's follower bob unfollowed it; cat follows it
    feed = orm.get("/api/v1/feed?limit=100", cast.tokens["bob"])["json"]["items"]
    boards = {p["board_id"] for p in feed}
    assert cast.id("recipes") in boards and cast.id("garden") not in boards
    assert cast.id("saved") in {p["id"] for p in feed}  # his own pins are in it too


def test_unknown_and_malformed_ids_are_json_404s(cast: Cast, orm: OrmBuild) -> None:
    paths = [
        f"/api/v1/pins/{cast.id('recipes')}",  # a board's ID
        f"/api/v1/pins/{cast.deleted_pin}",
        f"/api/v1/pins/{cast.deleted_pin}/comments",
        "/api/v1/users/0123",
        "/api/v1/users/99999999999999999999999",
        "/api/v1/boards/not-an-id/pins",
        f"/api/v1/pins/{cast.id('ann')}/likes",
        "/api/v1/no/such/endpoint",
    ]
    for path, answer in zip(paths, orm.fetch([{"path": p} for p in paths]), strict=True):
        status, body = pinboard("GET", path)
        assert (answer["status"], status) == (404, 404), path
        assert answer["json"]["error"]["code"] == body["error"]["code"] == "not_found", path


#: SQL queries per read: the object (its counts are columns) or its page, the pinners it
#: names joined in; the feed's token, boards and page; a page's object and its list.
QUERIES = {
    "/api/v1/users/{ann}": 1,
    "/api/v1/users/{ann}/boards": 1,
    "/api/v1/boards/{recipes}": 1,
    "/api/v1/boards/{recipes}/pins": 1,
    "/api/v1/pins/{recipe10}": 1,
    "/api/v1/pins/{recipe10}/comments": 1,
    "/api/v1/pins/{recipe10}/likes": 1,
    "/api/v1/feed": 3,
    "/ann/": 2,
    "/ann/recipes/": 2,
    "/pin/{recipe10}/": 2,
}


def test_reads_cost_a_few_queries_whatever_the_page_size(cast: Cast, orm: OrmBuild) -> None:
    token = cast.tokens["bob"]
    names = {n: cast.id(n) for n in ("ann", "recipes", "recipe10")}
    paths = [template.format(**names) for template in QUERIES]
    requests = [{"path": p, "token": token} for p in paths]
    requests += [{"path": f"{p}?limit=2", "token": token} for p in paths]
    found = orm.fetch(requests)
    full, small = found[: len(paths)], found[len(paths) :]
    for template, at_50, at_2 in zip(QUERIES, full, small, strict=True):
        assert at_50["status"] == at_2["status"] == 200, at_50["path"]
        assert at_50["queries"] == at_2["queries"] == QUERIES[template], at_50["path"]


def test_the_cached_build_reads_from_its_cache_until_a_write_changes_what_it_read(
    cast: Cast, cached_orm: OrmBuild
) -> None:
    """Every read a second time costs no query; then dan likes and comments on a pin of
    cat's and follows her, through the cached build and pinboard alike, and what the cached
    build read before, it reads anew, as pinboard answers it."""
    token = cast.tokens["dan"]
    names = {n: cast.id(n) for n in ("ann", "recipes", "recipe10")}
    paths = [template.format(**names) for template in QUERIES]
    first = cached_orm.fetch([{"path": p, "token": token} for p in paths])
    again = cached_orm.fetch([{"path": p, "token": token} for p in paths])
    for before, after in zip(first, again, strict=True):
        assert before["status"] == after["status"] == 200, before["path"]
        assert after["queries"] == 0, after["path"]
        assert after.get("json", after.get("html")) == before.get("json", before.get("html"))
    pin, cat, board = cast.id("cat1"), cast.id("cat"), cast.id("cats")
    reads = [f"/api/v1/pins/{pin}", f"/api/v1/users/{cat}", f"/api/v1/users/{cast.id('dan')}"]
    reads += [f"/api/v1/boards/{board}", f"/api/v1/boards/{board}/pins", "/api/v1/feed"]
    reads += [f"/api/v1/pins/{pin}/comments", f"/api/v1/pins/{pin}/likes"]
    cached_orm.fetch([{"path": p, "token": token} for p in reads])  # now in the cache
    writes = [
        ("PUT", f"/api/v1/pins/{pin}/like", None),
        ("POST", f"/api/v1/pins/{pin}/comments", {"text": "Purr ✓"}),
        ("PUT", f"/api/v1/users/{cat}/follow", None),
    ]
    requests = [
        {"method": m, "path": p, "token": token, "body": json.dumps(b) if b else None}
        for m, p, b in writes
    ]
    found = cached_orm.fetch([*requests, *({"path": p, "token": token} for p in reads)])
    for (method, path, body), answer in zip(writes, found[: len(writes)], strict=True):
        assert answer["status"] == pinboard(method, path, token, body)[0], (method, path)
    for path, answer in zip(reads, found[len(writes) :], strict=True):
        theirs, (_, ours) = answer["json"], pinboard("GET", path, token)
        assert _without_new_ids(theirs) == _without_new_ids(ours), path
    liked = found[len(writes)]["json"]
    assert (liked["like_count"], liked["comment_count"]) == (1, 1)
    assert found[len(writes) + 1]["json"]["follower_count"] == 1
    assert pin in {p["id"] for p in found[len(writes) + 5]["json"]["items"]}  # dan's feed


# -- pages ------------------------------------------------------------------------------------

_CURSORS = re.compile(r'(data-next=")[^"]*(")|((?:cursor|comments)=)[^"#&]+')


def without_cursors(html: str) -> str:
    """The page with its paging cursors blanked: each build has cursors of its own."""
    return _CURSORS.sub(lambda m: (m.group(1) or m.group(3)) + "CURSOR" + (m.group(2) or ""), html)


@pytest.mark.parametrize("build", BUILDS)
def test_pages_send_pinboards_html(cast: Cast, build: str, request: pytest.FixtureRequest) -> None:
    orm: OrmBuild = request.getfixturevalue(build)
    saved, liked = cast.id("saved"), cast.id("recipe10")
    paths = ["/ann/", "/bob/", "/ann/recipes/", "/ann/empty-board/", f"/pin/{liked}/"]
    paths += [f"/pin/{saved}/", f"/pin/{cast.id('tomatoes')}/", "/ann/recipes/?partial=1"]
    # Twice: the cached build answers the second time from its cache.
    answers = orm.fetch([{"path": p} for p in paths + paths])[len(paths) :]
    for path, answer in zip(paths, answers, strict=True):
        status, html = pinboard("GET", path)
        assert (answer["status"], status) == (200, 200), path
        assert without_cursors(answer["html"]) == without_cursors(html), path
    board = orm.get("/ann/recipes/")["html"]
    assert board.count('class="pin"') == 50 and "More pins" in board
    assert board.count(" srcset=") == 10  # the wide pins' sharper thumbnails
    assert orm.get("/ann/")["html"].count('class="board-card"') == 3
    assert orm.get("/nobody/")["status"] == orm.get(f"/pin/{cast.deleted_pin}/")["status"] == 404


# -- writes and the copy ----------------------------------------------------------------------


def test_writes_answer_and_count_as_pinboards_do(cast: Cast, orm: OrmBuild) -> None:
    """wendy likes, saves and comments on a pin of xavier's, then follows him (whose board
    x1 she followed alone): both builds answer alike, then report the same counts."""
    pin, xavier, x1, x2 = (cast.id(n) for n in ("x1a", "xavier", "x1", "x2"))
    token = cast.tokens["wendy"]
    body = {"board_id": cast.id("wendys")}
    writes = [
        ("PUT", f"/api/v1/pins/{pin}/like", None),
        ("PUT", f"/api/v1/pins/{pin}/like", None),  # again: nothing changes
        ("POST", f"/api/v1/pins/{pin}/save", body),
        ("POST", f"/api/v1/pins/{pin}/comments", {"text": "  Lovely ✓  "}),
        ("PUT", f"/api/v1/users/{xavier}/follow", None),
        ("PUT", f"/api/v1/users/{cast.id('wendy')}/follow", None),  # herself: refused
        ("POST", f"/api/v1/pins/{pin}/comments", {"text": "   "}),  # blank: refused
        ("POST", f"/api/v1/pins/{pin}/save", {"board_id": cast.id("x1")}),  # not hers
        ("PUT", f"/api/v1/pins/{cast.deleted_pin}/like", None),
    ]
    requests = [
        {"method": m, "path": p, "token": token, "body": json.dumps(b) if b else None}
        for m, p, b in writes
    ]
    reads = [f"/api/v1/pins/{pin}", f"/api/v1/users/{xavier}", f"/api/v1/boards/{x1}"]
    reads += [f"/api/v1/boards/{x2}", f"/api/v1/pins/{pin}/comments", f"/api/v1/pins/{pin}/likes"]
    found = orm.fetch([*requests, *({"path": p} for p in reads)])
    for (method, path, body_sent), answer in zip(writes, found[: len(writes)], strict=True):
        status, body_back = pinboard(method, path, token, body_sent)
        assert answer["status"] == status, (method, path, answer)
        if status >= 400:
            assert answer["json"]["error"]["code"] == body_back["error"]["code"], path
        elif status == 201:
            assert _without_new_ids(answer["json"]) == _without_new_ids(body_back), path
    for path, answer in zip(reads, found[len(writes) :], strict=True):
        theirs, (_, ours) = answer["json"], pinboard("GET", path)
        if "items" in ours:  # the new comment: its own ID and time on each side
            theirs, ours = _without_new_ids(theirs), _without_new_ids(ours)
        assert theirs == ours, path
    liked = found[len(writes)]["json"]
    assert (liked["like_count"], liked["save_count"], liked["comment_count"]) == (1, 1, 1)
    assert found[len(writes) + 1]["json"]["follower_count"] == 1
    # Following xavier replaced wendy's follow of x1 alone, and follows x2 too.
    assert [found[len(writes) + n]["json"]["follower_count"] for n in (2, 3)] == [1, 1]


def _without_new_ids(body: dict[str, Any]) -> Any:
    """A body without the IDs and times of what the writes made (each side makes its own)."""
    if "items" in body:
        return [_without_new_ids(item) for item in body["items"]]
    return {k: v for k, v in body.items() if k not in ("id", "created_at")}


def test_the_copy_takes_every_live_row_once(cast: Cast, orm: OrmBuild) -> None:
    from bench.compare.copy import copy_into_orm

    assert orm.copied == {
        "orm_pinner": 6,
        "orm_board": 8,
        "orm_pin": 54 + 3 + 2 + 1 + 3 + 1,  # less the deleted recipe; the save
        "orm_comment": 3,
        "orm_like": 3,
        "orm_userfollow": 2,
        "orm_boardfollow": 2,
        "orm_boardunfollow": 1,
    }
    import MySQLdb

    conn = MySQLdb.connect(**orm.mysql)
    try:
        with pytest.raises(ValueError, match="freshly migrated"):
            copy_into_orm(conn, ["db00000"], ORM_DATABASE)
    finally:
        conn.close()
