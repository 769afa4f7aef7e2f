"""The shapes of the API's JSON: the objects it returns and the field types requests share.

TypedDicts, so that a serializer's dict is its schema at no cost per request,
with msgspec ``Meta`` constraints that the OpenAPI document (openapi.py)
carries: lengths come from the actions' limits. Request bodies are declared
next to their handlers in views/.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from msgspec import Meta

from social.notifications import LENGTH as NOTIFICATIONS_KEPT

from ..boards.actions import MAX_DESCRIPTION as MAX_BOARD_DESCRIPTION
from ..boards.actions import MAX_NAME
from ..errors import DomainError
from ..pins.actions import MAX_COMMENT, MAX_LINK
from ..pins.actions import MAX_DESCRIPTION as MAX_PIN_DESCRIPTION
from ..pins.images import FULL_MAX_SIDE, THUMBNAIL_WIDTH
from ..users.actions import MAX_ABOUT, MAX_DISPLAY_NAME
from ..users.avatars import SIZES as AVATAR_SIZES

#: What users.actions accepts for a username and an email.
MAX_USERNAME = 30
MAX_EMAIL = 254

Id = Annotated[
    str,
    Meta(
        pattern="^(0|[1-9][0-9]{0,19})$",
        description="A 64-bit object ID as a decimal string (IDs exceed 2^53): ASCII digits,"
        " no sign, spaces or leading zeros.",
        examples=["241294492511762325"],
    ),
]
Count = Annotated[int, Meta(ge=0)]
Timestamp = Annotated[str, Meta(description="ISO 8601 date and time, UTC.")]
Email = Annotated[str, Meta(max_length=MAX_EMAIL, extra_json_schema={"format": "email"})]
ImageSide = Annotated[int, Meta(ge=1)]
DisplayName = Annotated[
    str,
    Meta(
        max_length=MAX_DISPLAY_NAME,
        description="One line; empty means the username is shown instead.",
    ),
]
About = Annotated[str, Meta(max_length=MAX_ABOUT)]
Next = Annotated[
    str | None, Meta(description="The cursor of the next page; null on the last page.")
]


class AvatarImage(TypedDict):
    size: Annotated[
        int,
        Meta(
            description="Width and height in pixels (the picture is square): one of"
            f" {', '.join(map(str, AVATAR_SIZES))}."
        ),
    ]
    url: Annotated[str, Meta(description="URL of the picture (JPEG).")]


class Avatar(TypedDict):
    images: Annotated[list[AvatarImage], Meta(description="One per size, smallest first.")]


class User(TypedDict):
    id: Id
    username: Annotated[str, Meta(max_length=MAX_USERNAME)]
    display_name: DisplayName
    about: About
    follower_count: Count
    following_count: Count
    board_count: Count
    pin_count: Count
    like_count: Count
    avatar: Annotated[
        Avatar | None,
        Meta(description="The pinner's picture; null if they have none (show their initial)."),
    ]


class Me(User):  # the pinner of the token
    email: Email


class Board(TypedDict):
    id: Id
    owner_id: Id
    name: Annotated[str, Meta(max_length=MAX_NAME)]
    slug: str
    description: Annotated[str, Meta(max_length=MAX_BOARD_DESCRIPTION)]
    secret: Annotated[bool, Meta(description="Seen by its owner only (shown to them alone).")]
    pin_count: Count
    follower_count: Annotated[
        int,
        Meta(
            ge=0,
            description="Explicit followers of the board plus followers of its owner,"
            " less those who unfollowed this board.",
        ),
    ]


class Pin(TypedDict):
    id: Id
    board_id: Id
    owner_id: Id
    description: Annotated[str, Meta(max_length=MAX_PIN_DESCRIPTION)]
    link: Annotated[str, Meta(max_length=MAX_LINK)]
    image_url: Annotated[
        str, Meta(description=f"URL of the image (JPEG, at most {FULL_MAX_SIDE} px a side).")
    ]
    thumbnail_url: Annotated[
        str, Meta(description=f"URL of a {THUMBNAIL_WIDTH} px wide thumbnail.")
    ]
    width: ImageSide | None
    height: ImageSide | None
    like_count: Count
    save_count: Count
    comment_count: Count
    saved_from: Annotated[
        Id | None, Meta(description="For a save (repin): the pin it was saved from.")
    ]
    created_at: Timestamp


class Comment(TypedDict):
    id: Id
    pin_id: Id
    author: Annotated[User | None, Meta(description="Null if the author's account is gone.")]
    text: Annotated[str, Meta(max_length=MAX_COMMENT)]
    created_at: Timestamp


class UserList(TypedDict):
    items: list[User]
    next: Next


class BoardList(TypedDict):
    items: list[Board]
    next: Next


class PinList(TypedDict):
    items: list[Pin]
    next: Next


class CommentList(TypedDict):
    items: list[Comment]
    next: Next


#: notifications.kinds.KINDS
NotificationKind = Literal["like", "save", "comment", "follow", "follow_board", "invite"]


class Notification(TypedDict):
    kind: Annotated[
        NotificationKind,
        Meta(
            description="What `actor` did: liked, saved or commented on your `pin`, followed"
            " you, followed your `board`, or invites you to collaborate on their `board`"
            " (accept with `POST /api/v1/boards/{board_id}/invitation`)."
        ),
    ]
    actor: Annotated[User, Meta(description="Who did it, as they are now.")]
    pin: Annotated[
        Pin | None, Meta(description="Your pin liked, saved or commented on; null for follows.")
    ]
    board: Annotated[
        Board | None,
        Meta(description="Your board followed, or the board you are invited to; null otherwise."),
    ]
    comment: Annotated[Comment | None, Meta(description="The comment; null for other kinds.")]
    created_at: Timestamp
    unread: Annotated[bool, Meta(description="Newer than what you marked read.")]


class NotificationList(TypedDict):
    items: list[Notification]
    next: Next
    unread_count: Annotated[
        int,
        Meta(
            ge=0,
            description="How many notifications are unread, of the newest"
            f" {NOTIFICATIONS_KEPT} kept.",
        ),
    ]


def _component(name: str) -> dict[str, str]:
    """A reference to a schema of the OpenAPI document (each is named after its TypedDict)."""
    return {"$ref": f"#/components/schemas/{name}"}


Found = Annotated[
    dict[str, Any],
    Meta(
        description="A pin, a board or a pinner, as the search's `type` asks.",
        extra_json_schema={"anyOf": [_component(n) for n in ("Pin", "Board", "User")]},
    ),
]


class SearchResults(TypedDict):
    items: list[Found]
    next: Next


class Token(TypedDict):
    token: Annotated[
        str,
        Meta(
            description="`<token ID>.<secret>`: send as `Authorization: Token <token>`."
            " Shown only here: the server keeps a hash of the secret."
        ),
    ]
    expires_at: Annotated[str, Meta(description="When the token stops being accepted.")]


class FollowedIds(TypedDict):
    ids: list[Id]


_KINDS = sorted(DomainError.__subclasses__(), key=lambda kind: kind.status)
ERROR_CODES = ", ".join(dict.fromkeys(kind.code for kind in _KINDS))


class ErrorDetail(TypedDict):
    code: Annotated[str, Meta(description=f"Machine-readable: {ERROR_CODES}.")]
    message: Annotated[str, Meta(description="For people.")]
    field: NotRequired[Annotated[str, Meta(description="The request field at fault, if one is.")]]


class Error(TypedDict):  # every refusal, whatever its status
    error: ErrorDetail
