"""The writes: like, save (repin), comment, follow, with pinboard's refusals.

Each write adds to the counts it changes (models.py) in its own transaction, in the
database (``F``: concurrent writes never lose one another's additions), and through
``save()``, so that whatever listens for saved models hears of it (a cache's invalidation).

Every write locks rows in one order, pins, then boards, then pinners (each kind by ID):
its count updates come first, then its insert, whose foreign key checks lock the rows it
names in share mode, rows it already holds or a pinner, last. So two writes never wait
on each other in a cycle, which InnoDB would break by failing one of them.
"""

from __future__ import annotations

from collections import Counter

from django.db import IntegrityError, transaction
from django.db.models import F, Model

from .api import forbidden, invalid, not_found
from .models import Board, BoardFollow, BoardUnfollow, Comment, Like, Pin, Pinner, UserFollow


def add_to_counts(instance: Model, **deltas: int) -> None:
    """Add ``deltas`` to ``instance``'s count columns, in the database."""
    for name, delta in deltas.items():
        setattr(instance, name, F(name) + delta)
    instance.save(update_fields=list(deltas))


def _pin(pin_id: int) -> Pin:
    found = Pin.objects.filter(pk=pin_id).first()
    if found is None:
        raise not_found("no such pin")
    return found


def like(actor: Pinner, pin_id: int) -> None:
    """Like a pin; liking it again changes nothing."""
    pin = _pin(pin_id)
    if Like.objects.filter(user=actor, pin=pin).exists():
        return
    try:
        with transaction.atomic():
            add_to_counts(pin, like_count=1)
            add_to_counts(actor, like_count=1)
            Like.objects.create(user=actor, pin=pin)
    except IntegrityError:
        pass  # liked meanwhile, by another request of the same pinner


def save(actor: Pinner, pin_id: int, board_id: int, description: str | None) -> Pin:
    """A new pin on one of the actor's boards, showing the same image, that records its source."""
    source = _pin(pin_id)
    board = Board.objects.filter(pk=board_id).first()
    if board is None:
        raise not_found("no such board", field="board_id")
    if board.owner_id != actor.pk:
        raise forbidden("this board is not yours")
    with transaction.atomic():
        add_to_counts(source, save_count=1)
        add_to_counts(board, pin_count=1)
        if not board.secret:  # a pinner's pin count is of their public boards' pins
            add_to_counts(actor, pin_count=1)
        return Pin.objects.create(
            board=board,
            owner=actor,
            description=source.description if description is None else description,
            link=source.link,
            image_key=source.image_key,
            thumbnail_key=source.thumbnail_key,
            width=source.width,
            height=source.height,
            thumbnail_width=source.thumbnail_width,
            thumbnail_height=source.thumbnail_height,
            thumbnail_2x_key=source.thumbnail_2x_key,
            thumbnail_2x_width=source.thumbnail_2x_width,
            saved_from=source,
        )


def comment(actor: Pinner, pin_id: int, text: str) -> Comment:
    pin = _pin(pin_id)
    with transaction.atomic():
        add_to_counts(pin, comment_count=1)
        return Comment.objects.create(pin=pin, author=actor, text=text)


def follow(actor: Pinner, user_id: int) -> None:
    """Follow a pinner, and so all their boards: their boards the actor followed one by one,
    or had unfollowed, go back to following through them."""
    if user_id == actor.pk:
        raise invalid("you cannot follow yourself", field="user_id")
    followed = Pinner.objects.filter(pk=user_id).first()
    if followed is None:
        raise not_found("no such user")
    try:
        with transaction.atomic():
            _follow(actor, followed)
    except IntegrityError:
        pass  # followed meanwhile, by another request of the same pinner


def _follow(actor: Pinner, followed: Pinner) -> None:
    """A board's followers are its own, plus its owner's, less those who unfollowed it: a
    new follower of its owner counts once more, a follow of it alone or an unfollow ends."""
    new = not UserFollow.objects.filter(follower=actor, followed=followed).exists()
    alone = list(BoardFollow.objects.filter(follower=actor, board__owner=followed))
    unfollowed = list(BoardUnfollow.objects.filter(user=actor, board__owner=followed))
    lost, back = Counter(r.board_id for r in alone), Counter(r.board_id for r in unfollowed)
    for board in Board.objects.filter(owner=followed).order_by("pk"):
        change = int(new) - lost[board.pk] + back[board.pk]
        if change:
            add_to_counts(board, follower_count=change)
    if new:
        for pinner in sorted((actor, followed), key=lambda p: p.pk):
            add_to_counts(pinner, **{"following_count" if pinner is actor else "follower_count": 1})
    for row in [*alone, *unfollowed]:
        row.delete()
    if new:
        UserFollow.objects.create(follower=actor, followed=followed)
