"""The JSON a client sees for users, boards, pins, comments and notifications (shapes:
schemas.py).

IDs are decimal strings: they exceed 2^53, past which a JavaScript number
loses digits. Stored fields a client must never see (a password hash, the
token version, an email outside /me) are left out by naming what goes in.
"""

from __future__ import annotations

from typing import Any, cast

from social.rules import is_secret, shown_saved_from

from .. import entities
from ..boards.queries import board_stats
from ..entities import pin_stats, pinner_stats
from ..image_files import image_url
from ..notifications.kinds import INVITE
from ..notifications.queries import NotificationItem
from ..pins.images import image_urls
from ..users.avatars import SIZES as AVATAR_SIZES
from ..users.avatars import avatar_key
from .schemas import Avatar, Board, Comment, Me, Notification, NotificationKind, Pin, User


def _id(value: Any) -> str | None:
    return None if value is None else str(value)


def user(data: entities.User) -> User:
    stats = pinner_stats(data)
    return {
        "id": str(data["id"]),
        "username": data["username"],
        "display_name": data.get("display_name", ""),
        "about": data.get("about", ""),
        "follower_count": stats.followers,
        "following_count": stats.following,
        "board_count": stats.boards,
        "pin_count": stats.pins,
        "like_count": stats.likes,
        "avatar": avatar(data.get("avatar")),
    }


def avatar(stored: entities.Avatar | None) -> Avatar | None:
    """A user object's ``avatar`` (its files' keys by size) as URLs; None without one."""
    if not stored:
        return None
    return {"images": [{"size": s, "url": image_url(avatar_key(stored, s))} for s in AVATAR_SIZES]}


def me(data: entities.User) -> Me:
    return {**user(data), "email": data["email"]}


def board(data: entities.Board, owner_follower_count: int) -> Board:
    """``owner_follower_count``: following a pinner follows their boards (seed 004)."""
    return {
        "id": str(data["id"]),
        "owner_id": str(data["owner_id"]),
        "name": data["name"],
        "slug": data.get("slug", ""),
        "description": data.get("description", ""),
        "secret": is_secret(data),
        **board_stats(data, owner_follower_count),
    }


def pin(data: entities.Pin) -> Pin:
    stats, image = pin_stats(data), data["image"]
    urls = image_urls(data)
    return {
        "id": str(data["id"]),
        "board_id": str(data["board_id"]),
        "owner_id": str(data["owner_id"]),
        "description": data.get("description", ""),
        "link": data.get("link", ""),
        "image_url": urls.full,
        "thumbnail_url": urls.thumbnail,
        "width": image.get("width"),
        "height": image.get("height"),
        "like_count": stats.likes,
        "save_count": stats.saves,
        "comment_count": stats.comments,
        "saved_from": _id(shown_saved_from(data)),
        "created_at": data["created_at"],
    }


def comment(data: entities.Comment, author: entities.User | None) -> Comment:
    """``author``: the author's user object with counts (None if the account is gone)."""
    return {
        "id": str(data["id"]),
        "pin_id": str(data["pin_id"]),
        "author": user(author) if author is not None else None,
        "text": data["text"],
        "created_at": data["created_at"],
    }


def notification(data: NotificationItem, owner_follower_count: int) -> Notification:
    """``data``: an item of ``notifications.queries.hydrate`` (with counts);
    ``owner_follower_count``: the recipient's, whose board a follow names (an invitation
    names the actor's)."""
    actor, comment_data = data["actor"], data["comment"]
    if data["kind"] == INVITE:  # the actor's board
        owner_follower_count = pinner_stats(actor).followers
    return {
        "kind": cast("NotificationKind", data["kind"]),  # one of the site's kinds
        "actor": user(actor),
        "pin": pin(data["pin"]) if data["pin"] is not None else None,
        "board": board(data["board"], owner_follower_count) if data["board"] else None,
        "comment": comment(comment_data, actor) if comment_data is not None else None,
        "created_at": data["created_at"].isoformat(),
        "unread": data["unread"],
    }
