"""Writes to pins: create with an image (uploaded, or fetched from a URL), save (repin),
edit, delete, comment and delete comments.

A pin lives on its board's shard (and so its owner's). Create writes the pin
object, then the mappings that make it visible (board_has_pins with its
inverse, the owner's user_has_pins, or user_has_secret_pins on a secret board); a crash in
between leaves an object no list shows, unless the create is sent again with its
idempotency key: the retry takes the steps left (``resume_pin``, ``resume_comment``).

An uploaded image belongs to the pin that uploaded it (``image["source_pin"]``,
copied by saves); ``pin_image_used_by_pins`` maps that pin to every pin showing
the image, itself included. Delete soft-deletes the pin and takes it off its
lists at once, then queues ``tasks.purge_pin`` for the rest: its likes, saves
list and comments, and the image files once no pin shows them.

A save or a comment by someone else tells the pin's owner (``notifications``), with
the sequence of the mapping row it wrote; a deleted comment is taken off that list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.validators import URLValidator

from shardstore import IdempotencyKey, shard_of
from social.rules import announces_save, is_save, is_secret, pin_list, pin_list_on, save_fields

from .. import moments
from ..boards.privacy import (
    actionable_pin,
    deletable_pin,
    editable_pin,
    movable_to,
    pinnable_board,
    savable_to,
    visible_pin,
)
from ..boards.queries import get_board
from ..data_plane import cached_store, get_feeds
from ..entities import Board, Comment, Pin, PinImage
from ..errors import CouldNotFetch, Forbidden, InvalidField, NotFoundError, TooLarge
from ..feeds import actions as feeds
from ..notifications import actions as notifications
from ..notifications.kinds import COMMENT, SAVE
from ..search.tasks import index_pin
from ..text import clean_description, multi_line, one_line
from ..users.queries import get_user
from .fetch import fetch_image
from .images import delete_image, store_image
from .queries import get_comment, get_comments, get_pin, get_pins
from .tasks import purge_pin

MAX_DESCRIPTION = 500
MAX_LINK = 2048
MAX_COMMENT = 500
_url = URLValidator(schemes=["http", "https"])


def clean_link(link: object) -> str:
    if link is None or link == "":
        return ""
    if not isinstance(link, str) or len(link) > MAX_LINK:
        raise InvalidField("link must be an http(s) URL", field="link")
    one_line(link, "link")
    try:
        _url(link)
    except ValidationError:
        raise InvalidField("link must be an http(s) URL", field="link") from None
    return link


class NewPin(TypedDict):
    """A pin's own fields, as its create or save gives them (``_post`` adds where and when)."""

    description: str
    link: str
    image: PinImage
    saved_from: NotRequired[int]  # a save's (``social.rules.save_fields``)
    saved_from_secret: NotRequired[bool]


def _post(
    actor_id: int, board: Board, data: NewPin, *, upload: bool, key: IdempotencyKey | None
) -> Pin:
    """Make the pin (with its idempotency ``key``'s row, if any), then list it."""
    _, created_at = moments.now()
    stored = {**data, "board_id": board["id"], "owner_id": actor_id, "created_at": created_at}
    try:
        pin_id = cached_store().objects("pin").create(shard_of(board["id"]), stored, key=key)
    except BaseException:
        if upload:  # no pin names the files just stored: none are left behind
            delete_image(data["image"])
        raise
    return _list_pin(cast("Pin", {**stored, "id": pin_id}), board)


def _list_pin(pin: Pin, board: Board) -> Pin:
    """What shows a new pin, each step harmless to take again (a retried create finishes
    what its first attempt left undone: ``resume_pin``). Returns the pin as stored."""
    store, pin_id, sequence = cached_store(), pin["id"], moments.sequence_of(pin["created_at"])
    image = pin["image"]
    if not is_save(pin) and image.get("source_pin") != pin_id:  # an upload's image is its own
        image = {**image, "source_pin": pin_id}
        store.objects("pin").update(pin_id, {"image": image})
    source_pin = image.get("source_pin")
    if source_pin is not None:  # before the pin is listed: its image is in use from now on
        store.mapping("pin_image_used_by_pins").add(source_pin, pin_id)
    store.mapping("board_has_pins").add(board["id"], pin_id, sequence=sequence)
    store.mapping(pin_list_on(board)).add(pin["owner_id"], pin_id, sequence=sequence)
    listed = get_pin(pin_id)
    assert listed is not None
    feeds.send_to_followers(listed, sequence)
    index_pin.delay(pin_id)
    return listed


def create_pin(
    actor_id: int,
    board_id: int,
    image: Any,
    description: object = "",
    link: object = "",
    *,
    key: IdempotencyKey | None = None,
) -> Pin:
    board = pinnable_board(actor_id, board_id)
    data: NewPin = {
        "description": clean_description(description, most=MAX_DESCRIPTION),
        "link": clean_link(link),
        "image": store_image(image, private=is_secret(board)),
    }
    return _post(actor_id, board, data, upload=True, key=key)


def create_pin_from_url(
    actor_id: int,
    board_id: int,
    source_url: object,
    description: object = "",
    link: object = "",
    *,
    key: IdempotencyKey | None = None,
) -> Pin:
    """A pin of the image at ``source_url``, or of the image the web page there offers,
    checked and stored as an upload is. Without a link of its own the pin links to where
    ``source_url`` led (the page, or the image)."""
    board = pinnable_board(actor_id, board_id)
    description = clean_description(description, most=MAX_DESCRIPTION)
    link = clean_link(link)
    fetched = fetch_image(
        source_url,
        seconds=settings.PIN_FETCH_SECONDS,
        allow_loopback=settings.PIN_FETCH_ALLOW_LOOPBACK,
    )
    try:
        image = store_image(ContentFile(fetched.data), private=is_secret(board))
    except (InvalidField, TooLarge) as refused:  # what the URL gave is not an image to pin
        raise CouldNotFetch(refused.message) from None
    if not link:
        link = _link_or_nothing(fetched.source_url)
    data: NewPin = {"description": description, "link": link, "image": image}
    return _post(actor_id, board, data, upload=True, key=key)


def _link_or_nothing(url: str) -> str:
    try:
        return clean_link(url)
    except InvalidField:  # fetched, yet not a link the site shows (too long, say)
        return ""


def save_pin(
    actor_id: int,
    pin_id: int,
    board_id: int,
    description: object = None,
    *,
    key: IdempotencyKey | None = None,
) -> Pin:
    """Repin: a new pin on one of the actor's boards that records where it came from (a
    secret board's pin only where the copy stays secret: ``boards.privacy.savable_to``)."""
    source, source_board = actionable_pin(actor_id, pin_id)
    board = savable_to(actor_id, source_board, board_id)
    data: NewPin = {
        "description": source["description"]
        if description is None
        else clean_description(description, most=MAX_DESCRIPTION),
        "link": source["link"],
        "image": source["image"],
        **save_fields(pin_id, source_board),
    }
    pin = _post(actor_id, board, data, upload=False, key=key)
    _list_save(pin, source["owner_id"], board)
    return pin


def _list_save(pin: Pin, source_owner_id: int, board: Board) -> None:
    """What a save adds to its pin's listing (harmless to do again, as ``_list_pin``)."""
    source_id, sequence = pin["saved_from"], moments.sequence_of(pin["created_at"])
    cached_store().mapping("pin_saved_as_pins").add(source_id, pin["id"], sequence=sequence)
    if announces_save(board):
        notifications.announce(source_owner_id, SAVE, pin["owner_id"], source_id, sequence)


def resume_pin(actor_id: int, pin_id: int) -> Pin:
    """The actor's pin an earlier attempt of a create or save made (its idempotency key
    names it), listed as a finished create lists it: the steps that attempt did not get
    to are taken now. NotFoundError if it has been deleted since."""
    pin = get_pin(pin_id)
    board = get_board(pin["board_id"]) if pin is not None else None
    if pin is None or board is None or pin["owner_id"] != actor_id:
        raise NotFoundError("the pin made with this idempotency key has been deleted")
    listed = _list_pin(pin, board)
    source = get_pin(pin["saved_from"]) if is_save(pin) else None
    if source is not None:  # (a source deleted since has had its saves list cleared)
        _list_save(listed, source["owner_id"], board)
    return listed


def update_pin(actor_id: int, pin_id: int, changes: Mapping[str, object]) -> Pin:
    """Its pinner edits a pin, or moves it to another board (``boards.privacy.movable_to``:
    its comments and likes go with it)."""
    pin, board = editable_pin(actor_id, pin_id)
    store = cached_store()
    updates: dict[str, Any] = {}
    if "description" in changes:
        updates["description"] = clean_description(changes["description"], most=MAX_DESCRIPTION)
    if "link" in changes:
        updates["link"] = clean_link(changes["link"])
    new_board = changes.get("board_id")
    moved_to = None
    if new_board is not None and new_board != pin["board_id"]:
        moved_to = movable_to(actor_id, board, new_board)  # type: ignore[arg-type]
        updates["board_id"] = new_board
    if updates:
        store.objects("pin").update(pin_id, updates)
    if moved_to is not None:
        store.mapping("board_has_pins").remove(pin["board_id"], pin_id)
        store.mapping("board_has_pins").add(moved_to["id"], pin_id)
        _relist(pin, secret=is_secret(moved_to))
    if updates:
        index_pin.delay(pin_id)
    updated = get_pin(pin_id)
    assert updated is not None
    return updated


def _relist(pin: Pin, *, secret: bool) -> None:
    """A pin moved to a board of other secrecy: to the owner's other list, off the newest
    pins if secret (the feeds that hold it filter it at read, ``boards.privacy``)."""
    store = cached_store()
    store.mapping(pin_list(secret)).add(pin["owner_id"], pin["id"])
    store.mapping(pin_list(not secret)).remove(pin["owner_id"], pin["id"])
    if secret:
        get_feeds().remove_recent([pin["id"]])


def _take_down(pin: Pin) -> None:
    store = cached_store()
    store.mapping("board_has_pins").remove(pin["board_id"], pin["id"])
    for secret in (False, True):
        store.mapping(pin_list(secret)).remove(pin["owner_id"], pin["id"])
    if is_save(pin):
        store.mapping("pin_saved_as_pins").remove(pin["saved_from"], pin["id"])
    store.objects("pin").delete(pin["id"])
    purge_pin.delay(pin["id"])
    index_pin.delay(pin["id"])


def delete_pin(actor_id: int, pin_id: int) -> None:
    """Its pinner deletes a pin, or its board's owner does."""
    _take_down(deletable_pin(actor_id, pin_id))


def delete_pin_of_account(user_id: int, pin_id: int) -> None:
    """A deleted account's purge deletes its pins, on boards it no longer sees too (a
    secret group board it was removed from or left)."""
    pin = get_pin(pin_id)
    if pin is None or pin["owner_id"] != user_id:
        raise NotFoundError("no such pin")
    _take_down(pin)


def delete_pins_of_board(actor_id: int, board_id: int) -> None:
    store = cached_store()
    while True:
        page = store.mapping("board_has_pins").page(board_id, limit=100)
        if not page.ids:
            return
        pins = get_pins(page.ids, counts=False)
        live = {pin["id"] for pin in pins}
        for pin in pins:
            _take_down(pin)
        for stale in set(page.ids) - live:  # already deleted objects still listed
            store.mapping("board_has_pins").remove(board_id, stale)


def clean_comment(text: object) -> str:
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_COMMENT:
        raise InvalidField(f"comment must be 1-{MAX_COMMENT} characters", field="text")
    return multi_line(text, "text").strip()


def add_comment(
    actor_id: int, pin_id: int, text: object, *, key: IdempotencyKey | None = None
) -> Comment:
    text = clean_comment(text)
    pin, _ = actionable_pin(actor_id, pin_id)
    author = get_user(actor_id, counts=False)
    if author is None:
        raise NotFoundError("no such user")
    data = {
        "pin_id": pin_id,
        "author_id": actor_id,
        "author_username": author["username"],  # usernames never change
        "text": text,
        "created_at": moments.now()[1],
    }
    comment_id = cached_store().objects("comment").create(shard_of(pin_id), data, key=key)
    comment = cast("Comment", {**data, "id": comment_id})
    _list_comment(comment, pin["owner_id"])
    return comment


def _list_comment(comment: Comment, pin_owner_id: int) -> None:
    """What shows a new comment, each step harmless to take again (``resume_comment``)."""
    store, comment_id = cached_store(), comment["id"]
    author_id, sequence = comment["author_id"], moments.sequence_of(comment["created_at"])
    store.mapping("user_has_comments").add(author_id, comment_id, sequence=sequence)
    store.mapping("pin_has_comments").add(comment["pin_id"], comment_id, sequence=sequence)
    notifications.announce(pin_owner_id, COMMENT, author_id, comment_id, sequence)


def resume_comment(actor_id: int, comment_id: int) -> Comment:
    """The actor's comment an earlier attempt made (its idempotency key names it), listed
    as ``add_comment`` lists one. NotFoundError if it or its pin has been deleted since."""
    comment = get_comment(comment_id)
    pin = get_pin(comment["pin_id"]) if comment is not None else None
    if comment is None or pin is None or comment["author_id"] != actor_id:
        raise NotFoundError("the comment made with this idempotency key has been deleted")
    _list_comment(comment, pin["owner_id"])
    return comment


def delete_comment(actor_id: int, pin_id: int, comment_id: int) -> None:
    """Its author deletes a comment, or the owner of its pin does."""
    pin, _ = visible_pin(actor_id, pin_id)
    comment = get_comment(comment_id)
    if comment is None or comment["pin_id"] != pin_id:
        raise NotFoundError("no such comment")
    if comment["author_id"] != actor_id and pin["owner_id"] != actor_id:
        raise Forbidden("only its author or the pin's owner can delete a comment")
    _remove_comment(comment, pin["owner_id"])


def delete_comments_of_account(user_id: int, comment_ids: list[int]) -> None:
    """A deleted account's purge deletes its comments, wherever they are (the pins'
    boards may be secret to it by now); one already gone leaves only its edge."""
    store = cached_store()
    comments = {c["id"]: c for c in get_comments(comment_ids)}
    pins = {p["id"]: p for p in get_pins(sorted({c["pin_id"] for c in comments.values()}))}
    for comment_id in comment_ids:
        comment = comments.get(comment_id)
        if comment is None or comment["author_id"] != user_id:
            store.mapping("user_has_comments").remove(user_id, comment_id)
            continue
        pin = pins.get(comment["pin_id"])
        _remove_comment(comment, pin["owner_id"] if pin else None)


def _remove_comment(comment: Comment, pin_owner_id: int | None) -> None:
    store, comment_id = cached_store(), comment["id"]
    store.mapping("pin_has_comments").remove(comment["pin_id"], comment_id)  # off the pin at once
    store.objects("comment").delete(comment_id)
    store.mapping("user_has_comments").remove(comment["author_id"], comment_id)
    if pin_owner_id is not None:
        notifications.forget(pin_owner_id, [comment_id])
