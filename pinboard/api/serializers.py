"""The JSON a client sees for users, boards, pins, comments and notifications (shapes:
schemas.py).

IDs are decimal strings: they exceed 2^53, past which a JavaScript number
loses digits. Stored fields a client must never see (a password hash, the
token version, an email outside /me) are left out by naming what goes in.
"""

from __future__ import annotations

from typing import Any

from social.rules import is_secret, shown_saved_from

from ..boards.queries import follower_count
from ..image_files import image_url
from ..notifications.kinds import INVITE
from ..pins.images import image_urls
from ..users.avatars import SIZES as AVATAR_SIZES
from .schemas import Avatar, Board, Comment, Me, Notification, Pin, User


def _id(value: Any) -> str | None:
    return None if value is None else str(value)


def user(data: dict[str, Any]) -> User:
    counts = data.get("counts", {})
    return {
        "id": str(data["id"]),
        "username": data["username"],
        "display_name": data.get("display_name", ""),
        "about": data.get("about", ""),
        "follower_count": counts.get("user_followed_by_users", 0),
        "following_count": counts.get("user_follows_users", 0),
        "board_count": counts.get("user_has_boards", 0),
        "pin_count": counts.get("user_has_pins", 0),
        "like_count": counts.get("user_likes_pins", 0),
        "avatar": avatar(data.get("avatar")),
    }


def avatar(stored: dict[str, str] | None) -> Avatar | None:
    """A user object's ``avatar`` (its files' keys by size) as URLs; None without one."""
    if not stored:
        return None
    return {"images": [{"size": s, "url": image_url(stored[str(s)])} for s in AVATAR_SIZES]}


def me(data: dict[str, Any]) -> Me:
    return {**user(data), "email": data["email"]}


def board(data: dict[str, Any], owner_follower_count: int) -> Board:
    """``owner_follower_count``: following a pinner follows their boards (seed 004)."""
    return {
        "id": str(data["id"]),
        "owner_id": str(data["owner_id"]),
        "name": data["name"],
        "slug": data.get("slug", ""),
        "description": data.get("description", ""),
        "secret": is_secret(data),
        "pin_count": data["counts"]["board_has_pins"],
        "follower_count": follower_count(data, owner_follower_count),
    }


def pin(data: dict[str, Any]) -> Pin:
    counts, image = data["counts"], data["image"]
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
        "like_count": counts["pin_liked_by_users"],
        "save_count": counts["pin_saved_as_pins"],
        "comment_count": counts["pin_has_comments"],
        "saved_from": _id(shown_saved_from(data)),
        "created_at": data["created_at"],
    }


def comment(data: dict[str, Any], author: dict[str, Any] | None) -> Comment:
    """``author``: the author's user object with counts (None if the account is gone)."""
    return {
        "id": str(data["id"]),
        "pin_id": str(data["pin_id"]),
        "author": user(author) if author is not None else None,
        "text": data["text"],
        "created_at": data["created_at"],
    }


def notification(data: dict[str, Any], owner_follower_count: int) -> Notification:
    """``data``: an item of ``notifications.queries.hydrate`` (with counts);
    ``owner_follower_count``: the recipient's, whose board a follow names (an invitation
    names the actor's)."""
    actor, comment_data = data["actor"], data["comment"]
    if data["kind"] == INVITE:  # the actor's board
        owner_follower_count = actor["counts"]["user_followed_by_users"]
    return {
        "kind": data["kind"],
        "actor": user(actor),
        "pin": pin(data["pin"]) if data["pin"] is not None else None,
        "board": board(data["board"], owner_follower_count) if data["board"] else None,
        "comment": comment(comment_data, actor) if comment_data is not None else None,
        "created_at": data["created_at"].isoformat(),
        "unread": data["unread"],
    }
