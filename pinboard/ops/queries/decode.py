"""The ID decoder: what an ID, a username or a site URL points at, and where it lives.

``resolve`` turns what an operator pasted into an ID (a username through the
mod-shard lookup, a URL by its path); ``describe`` splits the ID into shard,
type and local id, names the host that masters the shard, reads the row from
the store itself (not the cache: the console shows what is stored, deleted
objects included) and the first page of each of its mappings.

Secrets never leave the store through here: a pinner's password hash and an
API token's hash are dropped from the body shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from shardstore import (
    InvalidId,
    InvalidKey,
    ObjectType,
    ShardStoreError,
    Store,
    UnknownShard,
    decompose,
)
from shardstore.ids import parse
from shardstore.topology import database_name

from ...catalog import CATALOG
from ...users.actions import RESERVED_USERNAMES, USERNAME

#: Fields a body is shown without, by type (anything hashed from a secret).
SECRET_FIELDS = {"user": ("password",), "token": ("hash",)}
#: To-IDs shown per mapping.
MAPPING_PAGE = 20
MAX_QUERY = 2000
#: URL paths whose second segment is an ID: /pin/<id>/, /boards/<id>/..., /users/<id>/...
_ID_PATHS = {"pin", "boards", "users"}
_API_IDS = {"pins", "boards", "users", "comments"}  # /api/v1/<kind>/<id>...
_PROFILE_PAGES = {"followers", "following"}


class DecodeError(Exception):
    """What was pasted is malformed (400) or names nothing (404)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


@dataclass(frozen=True)
class MappingView:
    relation: str
    to_type: str
    count: int
    ids: list[int]


@dataclass
class Decoded:
    object_id: int
    how: str  # how it was found: "an ID", "the username ada", ...
    shard: int
    type_id: int
    local_id: int
    database: str
    type_name: str | None = None
    host: str | None = None
    replicas: list[str] = field(default_factory=list)
    body: str | None = None  # pretty JSON, secrets dropped
    hidden: list[str] = field(default_factory=list)  # the secret fields dropped
    active: bool = True
    mappings: list[MappingView] = field(default_factory=list)
    problem: str = ""  # why there is no object here

    @property
    def found(self) -> bool:
        return self.body is not None


def resolve(query: str, store: Store) -> tuple[int, str]:
    """The ID an ID, username or site URL names, and how it was found."""
    text = query.strip()
    if not text:
        raise DecodeError("paste an ID, a username or a URL of this site")
    if len(text) > MAX_QUERY:
        raise DecodeError(f"at most {MAX_QUERY} characters")
    if text.startswith(("http://", "https://", "/")):
        return _from_path(urlsplit(text).path, store)
    if text.lstrip("+-").isdigit():
        return _parse_id(text), "an ID"  # signs and leading zeros are refused there
    if not USERNAME.fullmatch(text):
        raise DecodeError(f"{text[:40]!r} is not an ID, a username or a URL of this site")
    return _by_username(text, store), f"the username {text}"


def _parse_id(text: str) -> int:
    try:
        return parse(text)
    except InvalidId as exc:
        raise DecodeError(str(exc)) from None


def _by_username(name: str, store: Store) -> int:
    try:
        found = store.lookup("username").get(name)
    except InvalidKey as exc:
        raise DecodeError(str(exc)) from None
    if found is None:
        raise DecodeError(f"no pinner is called {name!r}", 404)
    return found


def _from_path(path: str, store: Store) -> tuple[int, str]:
    parts = [part for part in path.split("/") if part]
    how = f"the URL {path}"
    if len(parts) >= 2 and parts[0] in _ID_PATHS:
        return _parse_id(parts[1]), how
    if len(parts) >= 4 and parts[:2] == ["api", "v1"] and parts[2] in _API_IDS:
        return _parse_id(parts[3]), how
    if not parts or parts[0].lower() in RESERVED_USERNAMES:
        raise DecodeError(f"{path} is not the address of a pin, a board or a pinner")
    user_id = _by_username(parts[0], store)
    if len(parts) == 1 or (len(parts) == 2 and parts[1] in _PROFILE_PAGES):
        return user_id, how
    if len(parts) == 2:  # /<username>/<board slug>/
        try:
            board_id = store.lookup("board_slug").get(f"{user_id}:{parts[1]}")
        except InvalidKey as exc:
            raise DecodeError(str(exc)) from None
        if board_id is None:
            raise DecodeError(f"{parts[0]} has no board {parts[1]!r}", 404)
        return board_id, how
    raise DecodeError(f"{path} is not the address of a pin, a board or a pinner")


def describe(object_id: int, how: str, store: Store) -> Decoded:
    """Where the ID lives and what is stored there (``problem`` says why nothing is)."""
    shard, type_id, local_id = decompose(object_id)
    decoded = Decoded(object_id, how, shard, type_id, local_id, database_name(shard))
    object_type = CATALOG.types_by_id.get(type_id)
    if object_type is None:
        decoded.problem = f"type {type_id} is not a registered type"
        return decoded
    decoded.type_name = object_type.name
    try:
        shard_range = store.topology.range_of(shard)
    except UnknownShard as exc:
        decoded.problem = str(exc)
        return decoded
    decoded.host, decoded.replicas = shard_range.master, list(shard_range.replicas)
    try:
        data = store.objects(object_type.name).get(object_id, include_inactive=True)
        mappings = _mappings(object_type, object_id, store) if data is not None else []
    except ShardStoreError as exc:  # the host is down: say so, on the page
        decoded.problem = str(exc)
        return decoded
    if data is None:
        decoded.problem = f"no {object_type.name} is stored at local id {local_id} of shard {shard}"
        return decoded
    decoded.active = data.get("active", True) is not False
    decoded.body, decoded.hidden = _shown(object_type, data)
    decoded.mappings = mappings
    return decoded


def _shown(object_type: ObjectType, data: dict[str, Any]) -> tuple[str, list[str]]:
    secret = SECRET_FIELDS.get(object_type.name, ())
    hidden = [name for name in secret if name in data]
    visible = {key: value for key, value in data.items() if key not in secret}
    return json.dumps(visible, indent=2, sort_keys=True, ensure_ascii=False), hidden


def _mappings(object_type: ObjectType, object_id: int, store: Store) -> list[MappingView]:
    views = []
    for relation in CATALOG.relations.values():
        if relation.from_type != object_type.name:
            continue
        table = store.mapping(relation.name)
        views.append(
            MappingView(
                relation.name,
                relation.to_type,
                table.count(object_id),
                table.page(object_id, limit=MAPPING_PAGE).ids,
            )
        )
    return views
