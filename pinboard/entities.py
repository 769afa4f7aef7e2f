"""The objects the site stores, as the store returns them: JSON blobs with their ``id``, and
with ``counts`` (mapping table -> rows) when a read asks for them. TypedDicts, so that a
dict the store decoded is typed as it is, at no cost per object: the queries that read
them say which type they are (a ``cast``), and the rest of the site is checked against
these fields. What is written, and where: each app's ``actions.py``.

And the counts of a pinner and of a pin by the names the pages and the API show them under.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, TypedDict


class UserCounts(TypedDict):
    user_followed_by_users: int
    user_follows_users: int
    user_has_boards: int
    user_has_pins: int
    user_likes_pins: int
    user_likes_secret_pins: int  # a part of user_likes_pins


class BoardCounts(TypedDict):
    board_has_pins: int
    board_followed_by_users: int
    board_unfollowed_by_users: int


class PinCounts(TypedDict):
    pin_liked_by_users: int
    pin_saved_as_pins: int
    pin_has_comments: int


#: A pinner's picture: its files' keys by side in pixels (``users.avatars.SIZES``).
Avatar = TypedDict("Avatar", {"60": str, "120": str})


class User(TypedDict):
    """A pinner (``users.actions.sign_up``)."""

    id: int
    username: str
    email: str
    password: str  # Django's encoded hash
    display_name: NotRequired[str]  # empty or missing: the username is shown
    about: str
    created_at: str
    avatar: NotRequired[Avatar]
    active: NotRequired[bool]  # False once deleted (shardstore's soft delete)
    counts: NotRequired[UserCounts]


class Board(TypedDict):
    """A board (``boards.actions.create_board``); its flag and members are read by
    ``social.rules`` alone."""

    id: int
    owner_id: int
    name: str
    slug: NotRequired[str]  # claimed once the board has its ID
    description: str
    secret: NotRequired[bool]
    collaborators: NotRequired[list[int]]
    invited: NotRequired[list[int]]
    created_at: str
    active: NotRequired[bool]
    counts: NotRequired[BoardCounts]


class PinImage(TypedDict):
    """A pin's image (``pins.images.store_image``): its files' keys and sizes."""

    key: str
    thumbnail_key: str
    thumbnail_2x_key: NotRequired[str]  # none for an image narrower than the sharper one
    width: int
    height: int
    thumbnail_width: int
    thumbnail_height: int
    thumbnail_2x_width: NotRequired[int]
    source_pin: NotRequired[int]  # the pin that uploaded it (none before images recorded it)


class Pin(TypedDict):
    """A pin (``pins.actions``); a save's fields are ``social.rules.save_fields``."""

    id: int
    board_id: int
    owner_id: int
    description: str
    link: str
    image: PinImage
    created_at: str
    saved_from: NotRequired[int]
    saved_from_secret: NotRequired[bool]
    active: NotRequired[bool]
    counts: NotRequired[PinCounts]


class CommentAuthor(TypedDict):
    id: int
    username: str


class Comment(TypedDict):
    """A comment (``pins.actions.add_comment``); ``author`` is added when a page of them is
    read (``pins.queries.reading_comments_of``)."""

    id: int
    pin_id: int
    author_id: int
    author_username: str
    text: str
    created_at: str
    author: NotRequired[CommentAuthor]


class Token(TypedDict):
    """An API token (``users.tokens.issue_token``)."""

    id: int
    user_id: str  # a decimal string
    hash: str  # SHA-256 of the secret
    created_at: str
    expires_at: str


@dataclass(frozen=True)
class PinnerStats:
    followers: int
    following: int
    boards: int
    pins: int
    likes: int


def pinner_stats(user: User) -> PinnerStats:
    """A pinner's counts (all 0 if the user was read without them)."""
    counts = user.get("counts")
    if counts is None:
        return PinnerStats(0, 0, 0, 0, 0)
    return PinnerStats(
        followers=counts["user_followed_by_users"],
        following=counts["user_follows_users"],
        boards=counts["user_has_boards"],
        pins=counts["user_has_pins"],
        # Likes of pins on secret boards are left out, as secret pins are from ``pins``.
        likes=max(0, counts["user_likes_pins"] - counts["user_likes_secret_pins"]),
    )


@dataclass(frozen=True)
class PinStats:
    likes: int
    saves: int
    comments: int


def pin_stats(pin: Pin) -> PinStats:
    counts = pin["counts"]
    return PinStats(
        likes=counts["pin_liked_by_users"],
        saves=counts["pin_saved_as_pins"],
        comments=counts["pin_has_comments"],
    )
