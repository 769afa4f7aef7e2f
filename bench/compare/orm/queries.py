"""The reads that are more than a filter: the covers of a pinner's boards, and the boards a
home feed is made of. Counts need no query of their own: they are columns (models.py)."""

from __future__ import annotations

from django.db.models import IntegerField, OuterRef, QuerySet, Subquery, Value

from .models import Board, BoardFollow, BoardUnfollow, Pin, Pinner


def with_cover(boards: QuerySet[Board]) -> QuerySet[Board]:
    """``cover_key``: the thumbnail of each board's newest pin (None for an empty board)."""
    newest = Pin.objects.filter(board=OuterRef("pk")).order_by("-created_at", "-id")
    return boards.annotate(cover_key=Subquery(newest.values("thumbnail_key")[:1]))


def feed_board_ids(viewer: Pinner) -> list[int]:
    """The boards whose pins make the viewer's home feed: their own, every public board of
    the pinners they follow less those they unfollowed, and the public boards they follow on
    their own.

    One query, a UNION of four index reads, each row tagged with what it is; as one WHERE
    with OR, MariaDB would read every board to test it. Joins, not subqueries, so every
    table read is in the query's own FROM, where a cache of querysets sees it.
    """
    public = Board.objects.filter(secret=False)
    own = public.filter(owner=viewer).values_list("pk", _tag(FOLLOWED))
    followed_alone = BoardFollow.objects.filter(follower=viewer, board__secret=False)
    through_pinners = public.filter(owner__followers__follower=viewer)
    unfollowed = BoardUnfollow.objects.filter(user=viewer)
    rows = own.union(
        followed_alone.values_list("board", _tag(FOLLOWED)),
        through_pinners.values_list("pk", _tag(THROUGH_PINNER)),
        unfollowed.values_list("board", _tag(UNFOLLOWED)),
        all=True,
    )
    tagged: dict[int, set[int]] = {FOLLOWED: set(), THROUGH_PINNER: set(), UNFOLLOWED: set()}
    for board, tag in rows:
        tagged[tag].add(board)
    return sorted(tagged[FOLLOWED] | (tagged[THROUGH_PINNER] - tagged[UNFOLLOWED]))


FOLLOWED, THROUGH_PINNER, UNFOLLOWED = 1, 2, 3


def _tag(value: int) -> Value:
    return Value(value, IntegerField())
