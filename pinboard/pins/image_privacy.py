"""A pin's image files follow its board's secrecy: a board made secret moves its pins' files
under private keys (``image_files.PRIVATE``: shown through short-lived signed URLs or a view
that checks who asks, ``pins.images.image_urls``), and back when it is made public again.

Files are never rewritten: a move copies them to new keys, points every pin showing the
image (the pin and its saves: ``pin_image_used_by_pins``) at the copies, then deletes the
old ones (in a task of its own, retried until done: ``delete_moved``), so a public URL of a
board made secret stops answering (on S3 within the 5 minutes CloudFront may keep it:
pinboard/settings/s3.py). An image a pin on a public board still shows stays public (it is
shown there anyway); one uploaded before images recorded their pin is shared by content
and stays where it is. When a pin showing an image is deleted, the image goes private if
only pins on secret boards show it now (``release``). A move S3 refuses is tried again
(``s3_images.STORAGE_ERRORS``): given up, it would leave the files public.
"""

from __future__ import annotations

from typing import cast

from shardstore.mappings import pages_of
from social.rules import is_secret

from ..boards.queries import get_boards
from ..data_plane import cached_store
from ..entities import Pin, PinImage
from ..image_files import content_name, delete_files, is_private, read, save_all
from ..ledger import TRANSIENT_ERRORS, ledgered_task
from ..s3_images import STORAGE_ERRORS
from .images import SUFFIXES, file_keys
from .queries import get_pins

BATCH = 500


def follow_board(pin: Pin, secret: bool) -> None:
    """Move the pin's image files to private keys (``secret``) or public ones, if they are
    not there yet and no pin on a public board shows them (when made private)."""
    image = pin["image"]
    source = image.get("source_pin")
    if source is None or is_private(image["key"]) == secret:
        return
    store = cached_store()
    showing = [
        shown
        for ids in pages_of(store.mapping("pin_image_used_by_pins"), source, batch=BATCH)
        for shown in get_pins(ids)
        if shown["image"].get("key") == image["key"]
    ]
    if all(shown["id"] != pin["id"] for shown in showing):  # its own row half-written
        showing.append(pin)
    boards = {b["id"]: b for b in get_boards(sorted({p["board_id"] for p in showing}))}
    shown_by = [boards[p["board_id"]] for p in showing if p["board_id"] in boards]
    if secret and any(not is_secret(board) for board in shown_by):
        return  # a pin on a public board shows it
    moved = _copy(image, private=secret)
    for shown in showing:
        store.objects("pin").update(shown["id"], {"image": moved})
    delete_moved.delay(list(file_keys(image).values()))


@ledgered_task(retry_on=(*TRANSIENT_ERRORS, *STORAGE_ERRORS))
def delete_moved(keys: list[str]) -> None:
    """Delete the files a move copied from, in a task of its own: no pin names them any
    more, so a move tried again would not find them, and they would stay public."""
    delete_files(keys)


def release(source: int) -> None:
    """The image ``source`` uploaded, once a pin showing it has been deleted: moved under
    private keys if no pin left on a public board shows it (a public pin deleted with a
    secret board's save of it left; a board made secret whose image a public save kept
    public, until that save went)."""
    users = cached_store().mapping("pin_image_used_by_pins")
    left = None
    for ids in pages_of(users, source, batch=BATCH):
        pins = get_pins(ids, counts=False)
        boards = get_boards(sorted({pin["board_id"] for pin in pins}))
        if any(not is_secret(board) for board in boards):
            return  # shown publicly, as mostly found on the first page: it stays public
        left = left or next(iter(pins), None)
    if left is not None:
        follow_board(left, secret=True)


def _copy(image: PinImage, *, private: bool) -> PinImage:
    """The image with its files copied under new keys, public or private."""
    base = content_name("pins", read(image["key"]), private=private)
    files = {field: (base + SUFFIXES[field], read(key)) for field, key in file_keys(image).items()}
    keys = save_all(dict(files.values()))
    return cast("PinImage", {**image, **{field: keys[name] for field, (name, _) in files.items()}})
