"""Purging a deleted pin: what the delete action leaves to a task.

``delete_pin`` soft-deletes the pin and takes it off its board's and owner's
lists at once; ``purge_pin`` then removes what still points at it: every like
(``user_likes_pins`` with its inverse, and ``likes.actions.SECRET_LIKES``), its saves
list (the saved pins are other pinners' and stay), its comments, its place among the
site's newest pins, its owner's notifications of it, and its image files once no live
pin shows them (shown by secret boards' pins alone, they move under private keys:
``image_privacy.release``). Each mapping is removed through ``remove`` (forward, then
inverse), so a purge cut short leaves only pairs ``shardstore reconcile`` completes; the
task is idempotent, acks_late and retried, like the fan-out tasks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from shardstore.mappings import pages_of

from ..data_plane import cached_store, get_feeds, get_notifications
from ..entities import Pin
from ..ledger import TRANSIENT_ERRORS, ledgered_task
from ..likes.actions import forget_likes
from ..s3_images import STORAGE_ERRORS
from . import image_privacy
from .images import delete_image

BATCH = 500
RETRY_ON = (*TRANSIENT_ERRORS, *STORAGE_ERRORS)  # the image files


@ledgered_task(retry_on=RETRY_ON)
def purge_pin(pin_id: int) -> None:
    """Remove a deleted pin's likes, saves list, comments, and (if unused) its image files."""
    store = cached_store()
    pin = cast("Pin | None", store.objects("pin").get(pin_id, include_inactive=True))
    if pin is None or pin.get("active", True) is not False:  # gone, or not deleted
        return
    forget_likes(pin_id)
    saves = store.mapping("pin_saved_as_pins")
    for saved_ids in _pages("pin_saved_as_pins", pin_id):
        for saved_id in saved_ids:
            saves.remove(pin_id, saved_id)
    notifications = get_notifications()
    notifications.forget(pin["owner_id"], [pin_id])  # its likes and saves
    comments = store.mapping("pin_has_comments")
    for comment_ids in _pages("pin_has_comments", pin_id):
        notifications.forget(pin["owner_id"], comment_ids)  # first: a rerun sees the rest
        for comment_id in comment_ids:
            store.objects("comment").delete(comment_id)
            comments.remove(pin_id, comment_id)
    get_feeds().remove_recent([pin_id])
    _release_image(pin)


def _release_image(pin: Pin) -> None:
    """Drop the pin from its image's users; the last one out deletes the files."""
    source_pin = pin["image"].get("source_pin")
    if source_pin is None:
        # Uploaded before images recorded their pin: content-addressed files that any
        # number of pins may share, so they are kept.
        return
    users = cached_store().mapping("pin_image_used_by_pins")
    users.remove(source_pin, pin["id"])
    if users.count(source_pin) == 0:
        delete_image(pin["image"])
    else:
        image_privacy.release(source_pin)


def _pages(relation: str, from_id: int) -> Iterator[list[int]]:
    return pages_of(cached_store().mapping(relation), from_id, batch=BATCH)
