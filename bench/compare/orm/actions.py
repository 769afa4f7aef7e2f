"""The writes: like, save (repin), comment, follow, with pinboard's refusals.

Each write adds to the counts it changes (models.py) in its own transaction, in the
database (``F``: concurrent writes never lose one another's additions), and through
``save()``, so that whatever listens for saved models hears of it (a cache's invalidation).
"""

from __future__ import annotations

from collections import Counter

from django.db import transaction
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
    with transaction.atomic():
        _, made = Like.objects.get_or_create(user=actor, pin=pin)
        if made:
            add_to_counts(pin, like_count=1)
            add_to_counts(actor, like_count=1)


def save(actor: Pinner, pin_id: int, board_id: int, description: str | None) -> Pin:
    """A new pin on one of the actor's boards, showing the same image, that records its source."""
    source = _pin(pin_id)
    board = Board.objects.filter(pk=board_id).first()
    if board is None:
        raise not_found("no such board", field="board_id")
    if board.owner_id != actor.pk:
        raise forbidden("this board is not yours")
    with transaction.atomic():
        made = Pin.objects.create(
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
        add_to_counts(source, save_count=1)
        add_to_counts(board, pin_count=1)
        if not board.secret:  # a pinner's pin count is of their public boards' pins
            add_to_counts(actor, pin_count=1)
    return made


def comment(actor: Pinner, pin_id: int, text: str) -> Comment:
    pin = _pin(pin_id)
    with transaction.atomic():
        made = Comment.objects.create(pin=pin, author=actor, text=text)
        add_to_counts(pin, comment_count=1)
    return made


def follow(actor: Pinner, user_id: int) -> None:
    """Follow a pinner, and so all their boards: their boards the actor followed one by one,
    or had unfollowed, go back to following through them."""
    if user_id == actor.pk:
        raise invalid("you cannot follow yourself", field="user_id")
    followed = Pinner.objects.filter(pk=user_id).first()
    if followed is None:
        raise not_found("no such user")
    with transaction.atomic():
        _, made = UserFollow.objects.get_or_create(follower=actor, followed=followed)
        boards = {board.pk: board for board in Board.objects.filter(owner=followed)}
        # A board's followers: its own, plus its owner's, less those who unfollowed it.
        change: Counter[int] = Counter(dict.fromkeys(boards, 1) if made else {})
        for alone in BoardFollow.objects.filter(follower=actor, board__owner=followed):
            alone.delete()
            change[alone.board_id] -= 1
        for unfollowed in BoardUnfollow.objects.filter(user=actor, board__owner=followed):
            unfollowed.delete()
            change[unfollowed.board_id] += 1
        if made:
            add_to_counts(followed, follower_count=1)
            add_to_counts(actor, following_count=1)
        for board_id, delta in change.items():
            if delta:
                add_to_counts(boards[board_id], follower_count=delta)
