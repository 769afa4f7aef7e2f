"""Every storage call the site makes, on an S3 API server that enforces the instance roles'
policies as Terraform writes them: uploads of pin images and avatars as the web role, a
board's images moved to private keys and back, deleted pins', replaced avatars' and
deleted accounts' files deleted, each as the worker role; an upload cut short undoes
itself as the web role. No call may be refused, but those a test has S3 refuse for a while:
a task that moves or deletes files tries again (tests/site/s3_roles.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from botocore.exceptions import ClientError
from django.conf import settings

from pinboard import celery_app, image_files
from pinboard.boards.actions import create_board, update_board
from pinboard.pins.actions import create_pin, delete_pin, save_pin
from pinboard.pins.queries import get_pin
from pinboard.s3_images import STORAGE_ERRORS
from pinboard.users.actions import delete_account, set_avatar
from pinboard.users.queries import get_user
from tests.aws_server import AwsServer
from tests.infra.monitoring_checks import RULES
from tests.site.s3_roles import Bucket, on_s3
from toolkit.images import image_upload

User = dict[str, Any]


@pytest.fixture
def bucket(aws_server: AwsServer) -> Iterator[Bucket]:
    with on_s3(aws_server) as bucket:
        yield bucket


def files(pin_id: int) -> set[str]:
    pin = get_pin(pin_id)
    assert pin is not None
    image = pin["image"]
    return {image[f] for f in ("key", "thumbnail_key", "thumbnail_2x_key") if image.get(f)}


def avatar_files(user_id: int) -> set[str]:
    user = get_user(user_id)
    assert user is not None and user.get("avatar")
    return set(user["avatar"].values())


def test_pin_images_and_avatars_are_uploaded_as_the_web_role(
    bucket: Bucket, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    garden = create_board(ann["id"], "Garden")
    diary = create_board(ann["id"], "Diary", secret=True)
    public = create_pin(ann["id"], garden["id"], image_upload(size=(600, 400)))
    secret = create_pin(ann["id"], diary["id"], image_upload(size=(600, 400)))
    set_avatar(ann["id"], image_upload(size=(200, 200)))
    assert all(key.startswith("pins/") for key in files(public["id"]))
    assert all(key.startswith("private/pins/") for key in files(secret["id"]))
    assert all(key.startswith("avatars/") for key in avatar_files(ann["id"]))
    assert files(public["id"]) | files(secret["id"]) | avatar_files(ann["id"]) <= bucket.keys()
    stored_by = {"default": min(files(public["id"])), "private": min(files(secret["id"]))}
    for storage, key in stored_by.items():
        stored = bucket.admin.head_object(Bucket=bucket.name, Key=key)
        asked = settings.STORAGES[storage]["OPTIONS"]["object_parameters"]["CacheControl"]
        assert (stored["ContentType"], stored["CacheControl"]) == ("image/jpeg", asked)
    assert bucket.refused() == []


def test_a_board_made_secret_moves_its_images_as_the_worker_role_and_back(
    bucket: Bucket, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    garden = create_board(ann["id"], "Garden")
    pin = create_pin(ann["id"], garden["id"], image_upload(size=(600, 400)))
    public = files(pin["id"])
    update_board(ann["id"], garden["id"], {"secret": True})
    private = files(pin["id"])
    assert all(key.startswith("private/pins/") for key in private)
    assert private <= bucket.keys() and not public & bucket.keys()  # the public URLs end
    update_board(ann["id"], garden["id"], {"secret": False})
    again = files(pin["id"])
    assert all(key.startswith("pins/") for key in again)
    assert again <= bucket.keys() and not private & bucket.keys()
    assert bucket.refused() == []


@pytest.mark.parametrize("refused", ["s3:*", "s3:DeleteObject"])
def test_a_board_made_secret_while_s3_refuses_the_worker_moves_its_images_on_a_later_try(
    bucket: Bucket, make_user: Callable[..., User], refused: str
) -> None:
    # S3 refuses the worker until a task's first retry (its copies, or its deletes only):
    # the images move all the same, and no public file is left behind.
    ann = make_user("ann")
    garden = create_board(ann["id"], "Garden")
    pin = create_pin(ann["id"], garden["id"], image_upload())
    public = files(pin["id"])
    with bucket.refusing("worker", refused) as retried:
        update_board(ann["id"], garden["id"], {"secret": True})
    assert retried and all(key.startswith("private/pins/") for key in files(pin["id"]))
    assert files(pin["id"]) <= bucket.keys() and not public & bucket.keys()
    assert {answer.status for answer in bucket.refused()} == {403}


def test_a_deleted_pins_files_go_as_the_worker_role(
    bucket: Bucket, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    garden = create_board(ann["id"], "Garden")
    diary = create_board(ann["id"], "Diary", secret=True)
    pins = [create_pin(ann["id"], board["id"], image_upload()) for board in (garden, diary)]
    stored = set().union(*(files(pin["id"]) for pin in pins))
    for pin in pins:
        delete_pin(ann["id"], pin["id"])
    assert not stored & bucket.keys()
    assert bucket.refused() == []


def test_an_image_left_to_secret_boards_alone_goes_private_as_the_worker_role(
    bucket: Bucket, make_user: Callable[..., User]
) -> None:
    # A public pin deleted while a secret board's save shows its image; then a board made
    # secret whose image stayed public for a public save, until that save is deleted.
    ann, bob = make_user("ann"), make_user("bob")
    garden, hideout = create_board(ann["id"], "Garden"), create_board(bob["id"], "Hid", secret=True)
    pin = create_pin(ann["id"], garden["id"], image_upload())
    public = files(pin["id"])
    kept = save_pin(bob["id"], pin["id"], hideout["id"])
    delete_pin(ann["id"], pin["id"])
    assert all(key.startswith("private/pins/") for key in files(kept["id"]))
    assert files(kept["id"]) <= bucket.keys() and not public & bucket.keys()
    pin = create_pin(ann["id"], garden["id"], image_upload())
    shown = save_pin(bob["id"], pin["id"], create_board(bob["id"], "Shown")["id"])
    update_board(ann["id"], garden["id"], {"secret": True})
    public = files(pin["id"])
    assert public == files(shown["id"]) and not any(key.startswith("private/") for key in public)
    delete_pin(bob["id"], shown["id"])
    assert all(key.startswith("private/pins/") for key in files(pin["id"]))
    assert files(pin["id"]) <= bucket.keys() and not public & bucket.keys()
    assert bucket.refused() == []


def test_replaced_and_deleted_accounts_avatars_go_as_the_worker_role(
    bucket: Bucket, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    set_avatar(ann["id"], image_upload(size=(200, 200)))
    first = avatar_files(ann["id"])
    set_avatar(ann["id"], image_upload(size=(300, 300)))
    second = avatar_files(ann["id"])
    assert second <= bucket.keys() and not first & bucket.keys()
    garden = create_board(ann["id"], "Garden")
    pin_files = files(create_pin(ann["id"], garden["id"], image_upload())["id"])
    delete_account(ann["id"], "plum-orchard-42")
    assert not (second | pin_files) & bucket.keys()
    assert bucket.refused() == []


def test_a_deleted_pins_and_a_replaced_avatars_files_s3_refuses_to_delete_go_on_a_later_try(
    bucket: Bucket, make_user: Callable[..., User]
) -> None:
    ann = make_user("ann")
    set_avatar(ann["id"], image_upload(size=(200, 200)))
    pin = create_pin(ann["id"], create_board(ann["id"], "Garden")["id"], image_upload())
    stored = avatar_files(ann["id"]) | files(pin["id"])
    with bucket.refusing("worker", "s3:DeleteObject") as retried:
        set_avatar(ann["id"], image_upload(size=(300, 300)))
    with bucket.refusing("worker", "s3:DeleteObject") as retried_too:
        delete_pin(ann["id"], pin["id"])
    assert retried == ["pinboard.users.tasks.release_avatar"]
    assert retried_too == ["pinboard.pins.tasks.purge_pin"]
    assert not stored & bucket.keys()


def test_an_upload_cut_short_deletes_what_it_stored_as_the_web_role(bucket: Bucket) -> None:
    # The second file is one no role may write: the first, stored, is deleted again.
    with pytest.raises(ClientError, match="AccessDenied"):
        image_files.save_all({"pins/ab/cut-short.jpg": b"one", "elsewhere/two.jpg": b"two"})
    assert bucket.keys() == set()
    refused = bucket.refused()
    assert [(a.method, a.path, a.status) for a in refused] == [
        ("PUT", f"/{bucket.name}/elsewhere/two.jpg", 403)
    ]


def test_a_name_already_taken_is_never_written_over(bucket: Bucket) -> None:
    first = image_files.save("pins/ab/same.jpg", b"first")
    second = image_files.save("pins/ab/same.jpg", b"second")
    assert first == "pins/ab/same.jpg" and second != first and second.startswith("pins/ab/")
    assert bucket.body(first) == b"first" and bucket.body(second) == b"second"
    assert [a.status for a in bucket.refused()] == [412]  # S3 refused the name, not the role


def test_every_task_that_moves_or_deletes_images_raises_the_alert_when_it_gives_up() -> None:
    celery_app.loader.import_default_modules()
    retrying = {
        name
        for name, task in celery_app.tasks.items()
        if set(STORAGE_ERRORS) <= set(getattr(task, "autoretry_for", ()))
    }
    rules = yaml.safe_load(Path(RULES, "pinboard.yml").read_text())["groups"]
    (alert,) = [r for g in rules for r in g["rules"] if r.get("alert") == "ImageTaskFailed"]
    (pattern,) = re.findall(r'task=~"([^"]+)"', alert["expr"])
    watched = re.compile(pattern.replace("\\\\", "\\"))
    assert retrying and {name for name in retrying if not watched.fullmatch(name)} == set()
