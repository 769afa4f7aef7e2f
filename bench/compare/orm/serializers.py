"""pinboard's JSON for pinners, boards, pins and comments, field for field.

IDs are decimal strings (they exceed 2^53, where JavaScript numbers lose digits); times
are ISO 8601 in UTC with microseconds, as pinboard stores them. Counts are the models'
columns.
"""

from __future__ import annotations

from typing import Any

from .models import Board, Comment, Pin, Pinner


def pinner(user: Pinner) -> dict[str, Any]:
    return {
        "id": str(user.pk),
        "username": user.username,
        "display_name": user.display_name,
        "about": user.about,
        "follower_count": user.follower_count,
        "following_count": user.following_count,
        "board_count": user.board_count,
        "pin_count": user.pin_count,
        "like_count": user.like_count,
        "avatar": {"images": [{"size": s, "url": u} for s, u in urls.items()]}
        if (urls := user.avatar_urls())
        else None,
    }


def board(item: Board) -> dict[str, Any]:
    return {
        "id": str(item.pk),
        "owner_id": str(item.owner_id),
        "name": item.name,
        "slug": item.slug,
        "description": item.description,
        "secret": item.secret,
        "pin_count": item.pin_count,
        "follower_count": 0 if item.secret else item.follower_count,
    }


def pin(item: Pin) -> dict[str, Any]:
    return {
        "id": str(item.pk),
        "board_id": str(item.board_id),
        "owner_id": str(item.owner_id),
        "description": item.description,
        "link": item.link,
        "image_url": item.image_url,
        "thumbnail_url": item.thumbnail_url,
        "width": item.width,
        "height": item.height,
        "like_count": item.like_count,
        "save_count": item.save_count,
        "comment_count": item.comment_count,
        "saved_from": None if item.saved_from_id is None else str(item.saved_from_id),
        "created_at": item.created_at.isoformat(),
    }


def comment(item: Comment) -> dict[str, Any]:
    """``item.author`` read with it (``select_related``)."""
    return {
        "id": str(item.pk),
        "pin_id": str(item.pin_id),
        "author": pinner(item.author),
        "text": item.text,
        "created_at": item.created_at.isoformat(),
    }
