"""API tokens: issued at log-in, stored hashed, expiring, revocable one by one or all at once.

A token is ``<token object ID>.<secret>``. The token object lives on its
pinner's shard and holds ``{"user_id", "hash", "created_at", "expires_at"}``,
``hash`` being the SHA-256 of the secret: the store never holds a usable token.
Checking one costs a type-checked parse of the ID, one cached ``get`` and a
constant-time compare; the ID names the shard, so no lookup table is needed.
``user_has_tokens`` lists a pinner's tokens, so a password change can revoke
them all. The secret is 256 random bits, so a fast hash is enough.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta
from typing import cast

from django.conf import settings
from django.utils import timezone

from shardstore import shard_of

from ..data_plane import cached_store
from ..entities import Token, User
from ..errors import NotFoundError
from ..ids import parse_id
from .queries import get_user


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _expired(token: Token, now: datetime) -> bool:
    return datetime.fromisoformat(token["expires_at"]) <= now


def issue_token(user: User) -> dict[str, str]:
    """A new token for ``user``, valid for ``settings.API_TOKEN_SECONDS``:
    ``{"token", "expires_at"}``, the only time the secret is seen."""
    store = cached_store()
    user_id = user["id"]
    prune_expired(user_id)
    now = timezone.now()
    secret = secrets.token_urlsafe(32)
    expires_at = (now + timedelta(seconds=settings.API_TOKEN_SECONDS)).isoformat()
    token_id = store.objects("token").create(
        shard_of(user_id),
        {
            "user_id": str(user_id),
            "hash": _digest(secret),
            "created_at": now.isoformat(),
            "expires_at": expires_at,
        },
    )
    store.mapping("user_has_tokens").add(user_id, token_id)
    return {"token": f"{token_id}.{secret}", "expires_at": expires_at}


def _token_of(raw: str) -> Token | None:
    """The live token object ``raw`` names, if its secret matches; else None."""
    raw_id, _, secret = raw.partition(".")
    if not secret:
        return None
    try:
        token_id = parse_id(raw_id, "token")
    except NotFoundError:
        return None
    token = cast("Token | None", cached_store().objects("token").get(token_id))
    if token is None or not hmac.compare_digest(token["hash"], _digest(secret)):
        return None
    if _expired(token, timezone.now()):
        return None
    return token


def pinner_of_token(raw: str) -> User | None:
    """The pinner a token belongs to; None if it is malformed, unknown, expired or revoked."""
    token = _token_of(raw)
    if token is None:
        return None
    return get_user(int(token["user_id"]), counts=False)


def _delete(user_id: int, token_id: int) -> None:
    # The object first: from then on the token is refused, whatever happens to the row.
    store = cached_store()
    store.objects("token").delete(token_id, hard=True)
    store.mapping("user_has_tokens").remove(user_id, token_id)


def revoke_token(raw: str) -> bool:
    """Revoke the token ``raw``; whether it was a live token."""
    token = _token_of(raw)
    if token is None:
        return False
    _delete(int(token["user_id"]), token["id"])
    return True


def _token_ids(user_id: int) -> list[int]:
    mapping = cached_store().mapping("user_has_tokens")
    ids: list[int] = []
    cursor = None
    while True:
        page = mapping.page(user_id, limit=1000, cursor=cursor)
        ids += page.ids
        if page.cursor is None:
            return ids
        cursor = page.cursor


def revoke_tokens(user_id: int) -> None:
    """Revoke every token of the pinner (at a password change)."""
    for token_id in _token_ids(user_id):
        _delete(user_id, token_id)


def prune_expired(user_id: int) -> None:
    """Delete the pinner's expired tokens (and rows whose token is gone), so their list
    holds only live tokens."""
    token_ids = _token_ids(user_id)
    if not token_ids:
        return
    tokens = cast("list[Token]", cached_store().objects("token").get_many(token_ids))
    live = {t["id"]: t for t in tokens}
    now = timezone.now()
    for token_id in token_ids:
        token = live.get(token_id)
        if token is None or _expired(token, now):
            _delete(user_id, token_id)
