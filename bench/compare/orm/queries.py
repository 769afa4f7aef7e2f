"""The reads: querysets that bring each object's counts along in the same query, and the
boards a home feed is made of.

Each count is a correlated subquery (Django's documented ``OuterRef`` + ``values`` +
``annotate`` pattern), one range read of an index per row: on a pin, joining likes, saves
and comments at once with GROUP BY would multiply the rows instead.
"""

from __future__ import annotations

from django.db.models import Count, Expression, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from .models import Board, BoardFollow, BoardUnfollow, Comment, Like, Pin, Pinner, UserFollow


def count_of(rows: QuerySet, key: str) -> Expression:
    """How many of ``rows`` (filtered on an OuterRef through ``key``) there are; 0 for none."""
    counted = rows.order_by().values(key).annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted), Value(0))


def pinners_with_counts() -> QuerySet[Pinner]:
    me = OuterRef("pk")
    return Pinner.objects.annotate(
        follower_count=count_of(UserFollow.objects.filter(followed=me), "followed"),
        following_count=count_of(UserFollow.objects.filter(follower=me), "follower"),
        # public boards and pins only: a secret board is its owner's alone
        board_count=count_of(Board.objects.filter(owner=me, secret=False), "owner"),
        pin_count=count_of(Pin.objects.filter(owner=me, board__secret=False), "owner"),
        like_count=count_of(Like.objects.filter(user=me), "user"),
    )


def boards_with_counts() -> QuerySet[Board]:
    """Boards with ``pin_count`` and ``follower_count``: the board's own followers, plus its
    owner's (following a pinner follows their boards), less those who unfollowed it."""
    board, owner = OuterRef("pk"), OuterRef("owner")
    return Board.objects.annotate(
        pin_count=count_of(Pin.objects.filter(board=board), "board"),
        follower_count=count_of(BoardFollow.objects.filter(board=board), "board")
        + count_of(UserFollow.objects.filter(followed=owner), "followed")
        - count_of(BoardUnfollow.objects.filter(board=board), "board"),
    )


def with_cover(boards: QuerySet[Board]) -> QuerySet[Board]:
    """``cover_key``: the thumbnail of each board's newest pin (None for an empty board)."""
    newest = Pin.objects.filter(board=OuterRef("pk")).order_by("-created_at", "-id")
    return boards.annotate(cover_key=Subquery(newest.values("thumbnail_key")[:1]))


def pins_with_counts() -> QuerySet[Pin]:
    pin = OuterRef("pk")
    return Pin.objects.annotate(
        like_count=count_of(Like.objects.filter(pin=pin), "pin"),
        save_count=count_of(Pin.objects.filter(saved_from=pin), "saved_from"),
        comment_count=count_of(Comment.objects.filter(pin=pin), "pin"),
    )


def feed_board_ids(viewer: Pinner) -> list[int]:
    """The boards whose pins make the viewer's home feed: their own, every public board of
    the pinners they follow less those they unfollowed, and the public boards they follow on
    their own.

    One query, a UNION of three index reads; as one WHERE with OR, MariaDB reads every
    board to test it.
    """
    followed_pinners = UserFollow.objects.filter(follower=viewer).values("followed")
    unfollowed = BoardUnfollow.objects.filter(user=viewer).values("board")
    own = Board.objects.filter(owner=viewer, secret=False).values_list("pk", flat=True)
    through_pinners = (
        Board.objects.filter(owner__in=followed_pinners, secret=False)
        .exclude(pk__in=unfollowed)
        .values_list("pk", flat=True)
    )
    followed_alone = BoardFollow.objects.filter(follower=viewer, board__secret=False).values_list(
        "board", flat=True
    )
    return list(own.union(through_pinners, followed_alone))
