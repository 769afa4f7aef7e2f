"""Writes to pinners: sign up, check a password, change it, name themselves, set or remove
their avatar, delete the account.

A pinner is a user object on a random open shard; their username and email are
mod-shard lookups to its ID. Sign-up creates the object first, then claims the
username, then the email: whichever claim fails undoes the steps before it, so
two sign-ups racing for one name leave exactly one account.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from django.contrib.auth.hashers import check_password, make_password
from django.contrib.auth.models import User as AuthUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils import timezone

from shardstore import DuplicateKey, NotFound

from ..data_plane import cached_store
from ..entities import Avatar, User
from ..errors import Conflict, InvalidField, NotFoundError, WrongPassword
from ..search.tasks import index_user
from ..text import multi_line, one_line
from .avatars import delete_avatar, store_avatar
from .queries import get_user, user_id_for
from .tasks import purge_account, release_avatar
from .tokens import revoke_tokens

USERNAME = re.compile(r"[A-Za-z0-9_]{3,30}")  # the whole string (fullmatch): no "ada\n"
#: First path segments the site uses itself; a pinner named so would be unreachable.
RESERVED_USERNAMES = {
    "api", "pin", "pins", "static", "media", "login", "logout", "signup", "ops", "admin",
    "feed", "boards", "board", "settings", "about", "search", "new", "edit", "users", "me",
    "healthz", "readyz", "notifications",
}  # fmt: skip
MIN_PASSWORD = 8
MAX_DISPLAY_NAME = 50
MAX_ABOUT = 500


def clean_username(username: object) -> str:
    if not isinstance(username, str) or not USERNAME.fullmatch(username):
        raise InvalidField("username must be 3-30 letters, digits or underscores", field="username")
    if username.lower() in RESERVED_USERNAMES:
        raise InvalidField(f"the username {username!r} is reserved", field="username")
    return username


def clean_email(email: object) -> str:
    if not isinstance(email, str) or len(email) > 254:
        raise InvalidField("enter a valid email address", field="email")
    one_line(email, "email")  # a quoted local part may hold control characters
    try:
        validate_email(email)
    except ValidationError:
        raise InvalidField("enter a valid email address", field="email") from None
    return email.strip()


def clean_password(password: object, *, username: str, email: str, field: str = "password") -> str:
    """A new password that passes settings.AUTH_PASSWORD_VALIDATORS (too common, all digits,
    too like the username or email...); InvalidField on ``field`` with their messages."""
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= 256:
        raise InvalidField(f"password must be {MIN_PASSWORD}-256 characters", field=field)
    # An unsaved auth User only carries the attributes the similarity check compares
    # (and their names for its message); pinners are not auth users.
    try:
        validate_password(password, user=AuthUser(username=username, email=email))
    except ValidationError as error:
        raise InvalidField(" ".join(error.messages), field=field) from None
    return password


def sign_up(username: object, email: object, password: object) -> User:
    """Create a pinner; Conflict if the username or email is taken (case-insensitively)."""
    username, email = clean_username(username), clean_email(email)
    password = clean_password(password, username=username, email=email)
    store = cached_store()
    users = store.objects("user")
    data = {
        "username": username,
        "email": email,
        "password": make_password(password),
        "display_name": "",
        "about": "",
        "created_at": timezone.now().isoformat(),
    }
    user_id = users.create(store.new_user_shard(), data)
    try:
        store.lookup("username").insert(username, user_id)
    except DuplicateKey:
        users.delete(user_id, hard=True)
        raise Conflict(f"the username {username!r} is taken", field="username") from None
    try:
        store.lookup("email").insert(email, user_id)
    except DuplicateKey:
        store.lookup("username").delete(username, user_id)
        users.delete(user_id, hard=True)
        raise Conflict("an account with this email exists", field="email") from None
    index_user.delay(user_id)
    user = get_user(user_id)
    assert user is not None
    return user


def authenticate(login: object, password: object) -> User | None:
    """The pinner whose username or email and password these are, or None.

    An unknown login costs one run of the hasher too, as a wrong password does,
    so the time taken does not tell which usernames exist.
    """
    if not isinstance(login, str) or not isinstance(password, str):
        return None
    user_id = user_id_for("email" if "@" in login else "username", login)
    user = get_user(user_id, counts=False) if user_id else None
    if user is None:
        make_password(password)
        return None
    upgraded: list[str] = []
    if not check_password(password, user["password"], setter=upgraded.append):
        return None
    if upgraded:  # hashed by a hasher other than the first of settings.PASSWORD_HASHERS
        user = _set_password_hash(user["id"], make_password(password))
    return user


def _set_password_hash(user_id: int, encoded: str) -> User:
    return cast("User", cached_store().objects("user").update(user_id, {"password": encoded}))


def change_password(user_id: int, old_password: object, new_password: object) -> User:
    """Check the current password, set the new one, revoke every API token of the pinner.

    Sessions hold an HMAC of the password hash (users/auth.py), so every other
    session of the pinner ends too. Returns the user with the new hash.
    """
    user = get_user(user_id, counts=False)
    if user is None:
        raise InvalidField("no such pinner", field="old_password")
    if not isinstance(old_password, str) or not check_password(old_password, user["password"]):
        raise WrongPassword("the current password is wrong", field="old_password")
    new_password = clean_password(
        new_password, username=user["username"], email=user["email"], field="new_password"
    )
    user = _set_password_hash(user_id, make_password(new_password))
    revoke_tokens(user_id)
    return user


def update_profile(user_id: int, changes: Mapping[str, object]) -> User:
    """Set the pinner's ``display_name`` (one line) and ``about`` (a few lines), those of
    them in ``changes``; InvalidField, and nothing changed, if either is not right."""
    updates = {}
    if "display_name" in changes:
        name = changes["display_name"]
        if not isinstance(name, str) or len(name.strip()) > MAX_DISPLAY_NAME:
            raise InvalidField(
                f"the display name must be at most {MAX_DISPLAY_NAME} characters",
                field="display_name",
            )
        # Checked before stripped: strip() takes some controls (FF, VT, FS..US, NEL) for spaces.
        updates["display_name"] = one_line(name, "display_name").strip()
    if "about" in changes:
        about = changes["about"]
        if not isinstance(about, str) or len(about.strip()) > MAX_ABOUT:
            raise InvalidField(f"about must be at most {MAX_ABOUT} characters", field="about")
        updates["about"] = multi_line(about, "about").strip()
    if updates:
        cached_store().objects("user").update(user_id, updates)
        index_user.delay(user_id)
    return _user_after_change(user_id)


def set_avatar(user_id: int, upload: Any) -> User:
    """Make the uploaded image (checked as pin images are) the pinner's avatar; the files of
    the one it replaces are deleted. Returns the user with their counts."""
    stored = store_avatar(upload)
    try:
        _swap_avatar(user_id, stored)
    except NotFoundError:
        delete_avatar(stored)  # the account went meanwhile: nothing names these files
        raise
    return _user_after_change(user_id)


def remove_avatar(user_id: int) -> User:
    """Show the pinner's initial again; their avatar's files are deleted."""
    _swap_avatar(user_id, None)
    return _user_after_change(user_id)


def _swap_avatar(user_id: int, avatar: Avatar | None) -> None:
    """Record ``avatar`` (None: none) on the user object, then release the files of the one
    it held. Read and written in one transaction, so of two uploads at once each releases
    the avatar the other replaced, and no file is left that nothing names."""
    replaced: list[Avatar | None] = [None]

    def swap(data: dict[str, Any]) -> None:  # run again if the transaction is retried
        replaced[0] = data.pop("avatar", None)
        if avatar is not None:
            data["avatar"] = avatar

    try:
        cached_store().objects("user").update(user_id, swap)
    except NotFound:
        raise NotFoundError("no such pinner") from None
    if replaced[0]:
        release_avatar.delay(replaced[0])


def _user_after_change(user_id: int) -> User:
    user = get_user(user_id)
    if user is None:
        raise NotFoundError("no such pinner")
    return user


def delete_account(user_id: int, password: object) -> None:
    """End the account at once, if ``password`` is the pinner's: it can no longer be seen
    or used, its username and email stay taken, and ``tasks.purge_account`` removes what
    it made and its edges in the background."""
    user = get_user(user_id, counts=False)
    if user is None:
        raise NotFoundError("no such pinner")
    if not isinstance(password, str) or not check_password(password, user["password"]):
        raise WrongPassword("the password is wrong", field="password")
    cached_store().objects("user").delete(user_id)  # soft: the lookups still point at it
    revoke_tokens(user_id)
    purge_account.delay(user_id)
    index_user.delay(user_id)
