"""Writes to boards: create, edit (its name, description, secrecy), delete. A board lives on
its owner's shard, listed in the owner's public or secret boards (``social.rules.board_list``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from django.utils import timezone
from django.utils.text import slugify

from shardstore import DuplicateKey, IdempotencyKey, shard_of
from social.rules import board_list, board_list_of, is_secret, secret_flag

from ..data_plane import cached_store
from ..entities import Board
from ..errors import InvalidField, NotFoundError
from ..notifications.actions import forget as forget_notifications
from ..pins.actions import delete_pins_of_board
from ..search.tasks import index_board
from ..text import clean_description, one_line
from .privacy import owned_board
from .queries import get_board, slug_key
from .tasks import sync_board_privacy

MAX_NAME = 100
MAX_DESCRIPTION = 500
#: Second path segments of a pinner's own pages (``/<username>/followers/``); a board
#: slugged so would be unreachable at ``/<username>/<slug>/``.
RESERVED_SLUGS = {"followers", "following", "likes"}


def clean_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        raise InvalidField(f"board name must be 1-{MAX_NAME} characters", field="name")
    if not slugify(name):
        raise InvalidField("board name needs at least one letter or digit", field="name")
    return one_line(name, "name").strip()


def _claim_slug(owner_id: int, name: str, board_id: int) -> str:
    """The first free slug for ``name`` among the owner's boards, claimed for ``board_id``."""
    base = slugify(name)[:80]
    slugs = cached_store().lookup("board_slug")
    for n in range(1, 1000):
        slug = base if n == 1 else f"{base}-{n}"
        if slug in RESERVED_SLUGS:
            continue
        try:
            slugs.insert(slug_key(owner_id, slug), board_id)
            return slug
        except DuplicateKey:
            if slugs.get(slug_key(owner_id, slug)) == board_id:  # claimed by an earlier try
                return slug
            continue
    raise InvalidField("too many boards share this name", field="name")


def clean_secret(secret: object) -> bool:
    if not isinstance(secret, bool):
        raise InvalidField("secret must be true or false", field="secret")
    return secret


def create_board(
    owner_id: int,
    name: object,
    description: object = "",
    secret: object = False,
    *,
    key: IdempotencyKey | None = None,
) -> Board:
    name, description = clean_name(name), clean_description(description, most=MAX_DESCRIPTION)
    secret = clean_secret(secret)
    data = {
        "owner_id": owner_id,
        "name": name,
        "description": description,
        **secret_flag(secret),
        "created_at": timezone.now().isoformat(),
    }
    board_id = cached_store().objects("board").create(shard_of(owner_id), data, key=key)
    return _list_board(cast("Board", {**data, "id": board_id}))


def _list_board(board: Board) -> Board:
    """What shows a new board, each step harmless to take again (``resume_board``): its
    slug, then its owner's list. Returns the board as stored."""
    store, board_id, owner_id = cached_store(), board["id"], board["owner_id"]
    if not board.get("slug"):
        slug = _claim_slug(owner_id, board["name"], board_id)
        store.objects("board").update(board_id, {"slug": slug})
    store.mapping(board_list_of(board)).add(owner_id, board_id)
    index_board.delay(board_id)
    listed = get_board(board_id)
    assert listed is not None
    return listed


def resume_board(owner_id: int, board_id: int) -> Board:
    """The owner's board an earlier attempt made (its idempotency key names it), listed
    as ``create_board`` lists one. NotFoundError if it has been deleted since."""
    board = get_board(board_id)
    if board is None or board["owner_id"] != owner_id:
        raise NotFoundError("the board made with this idempotency key has been deleted")
    return _list_board(board)


def update_board(actor_id: int, board_id: int, changes: Mapping[str, object]) -> Board:
    board = owned_board(actor_id, board_id)
    updates: dict[str, Any] = {}
    if "description" in changes:
        updates["description"] = clean_description(changes["description"], most=MAX_DESCRIPTION)
    if "name" in changes:
        name = clean_name(changes["name"])
        if name != board["name"]:
            updates["name"] = name
            if slugify(name) != slugify(board["name"]):
                updates["slug"] = _claim_slug(actor_id, name, board_id)
    # An edit's fields (the form's or the API's) name the flag as the board does.
    flips = "secret" in changes and clean_secret(changes["secret"]) != is_secret(board)
    if flips:
        updates.update(secret_flag(not is_secret(board)))
    if not updates:
        return board
    store = cached_store()
    store.objects("board").update(board_id, updates)
    if "slug" in updates:
        store.lookup("board_slug").delete(slug_key(actor_id, board["slug"]), board_id)
    if flips:
        # The flag hides the board at once (boards.privacy); its lists follow: the board's
        # own now, its pins and the feeds that hold them in a task.
        store.mapping(board_list(not is_secret(board))).add(actor_id, board_id)
        store.mapping(board_list_of(board)).remove(actor_id, board_id)
        sync_board_privacy.delay(board_id)  # which also indexes the board and its pins again
    else:  # its pins are found by its name too
        index_board.delay(board_id, with_pins="name" in updates)
    updated = get_board(board_id)
    assert updated is not None
    return updated


def delete_board(actor_id: int, board_id: int) -> None:
    """Soft-delete a board and its pins, and take them off the owner's lists."""
    board = owned_board(actor_id, board_id)
    store = cached_store()
    for user_id in board.get("collaborators", ()):  # off their profiles
        store.mapping("board_has_collaborators").remove(board_id, user_id)
    delete_pins_of_board(actor_id, board_id)
    store.mapping(board_list_of(board)).remove(actor_id, board_id)
    store.lookup("board_slug").delete(slug_key(actor_id, board["slug"]), board_id)
    store.objects("board").delete(board_id)
    forget_notifications(actor_id, [board_id])  # its follows (its pins' go with each pin)
    index_board.delay(board_id)
