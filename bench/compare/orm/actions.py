"""The writes: like, save (repin), comment, follow, with pinboard's refusals."""

from __future__ import annotations

from django.db import transaction

from .api import forbidden, invalid, not_found
from .models import Board, BoardFollow, BoardUnfollow, Comment, Like, Pin, Pinner, UserFollow


def _pin(pin_id: int) -> Pin:
    found = Pin.objects.filter(pk=pin_id).first()
    if found is None:
        raise not_found("no such pin")
    return found


def like(actor: Pinner, pin_id: int) -> None:
    """Like a pin; liking it again changes nothing."""
    Like.objects.get_or_create(user=actor, pin=_pin(pin_id))


def save(actor: Pinner, pin_id: int, board_id: int, description: str | None) -> Pin:
    """A new pin on one of the actor's boards, showing the same image, that records its source."""
    source = _pin(pin_id)
    board = Board.objects.filter(pk=board_id).first()
    if board is None:
        raise not_found("no such board", field="board_id")
    if board.owner_id != actor.pk:
        raise forbidden("this board is not yours")
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
    return Comment.objects.create(pin=_pin(pin_id), author=actor, text=text)


def follow(actor: Pinner, user_id: int) -> None:
    """Follow a pinner, and so all their boards: their boards the actor followed one by one,
    or had unfollowed, go back to following through them."""
    if user_id == actor.pk:
        raise invalid("you cannot follow yourself", field="user_id")
    if not Pinner.objects.filter(pk=user_id).exists():
        raise not_found("no such user")
    with transaction.atomic():
        UserFollow.objects.get_or_create(follower=actor, followed_id=user_id)
        BoardFollow.objects.filter(follower=actor, board__owner_id=user_id).delete()
        BoardUnfollow.objects.filter(user=actor, board__owner_id=user_id).delete()
