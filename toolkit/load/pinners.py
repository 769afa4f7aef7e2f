"""The load's pinners: real accounts made through the site's API, kept in a file for later
runs, and put in groups (by default the master of their shard)."""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from shardstore import Topology, shard_of
from toolkit.images import image_bytes
from toolkit.load.api import Reply, Site


class SetupError(RuntimeError):
    """The load could not make or find its pinners (the site refused, or is not there)."""


@dataclass(frozen=True)
class Pinner:
    username: str
    password: str
    token: str
    user_id: int
    board_id: int
    pin_id: int


def _multipart(fields: dict[str, str], filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = f"drill{secrets.token_hex(12)}"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="image"; filename="{filename}"\r\n'
        "Content-Type: image/png\r\n\r\n".encode()
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _expect(reply: Reply, status: int, what: str) -> Any:
    if reply.status != status:
        raise SetupError(f"{what}: HTTP {reply.status or 'no answer'} {reply.body[:300]!r}")
    return reply.json() if reply.body else None


def make_pinner(site: Site, prefix: str = "drill") -> Pinner:
    """Sign a new pinner up through the API, log in, make a board and a pin."""
    username = f"{prefix}_{secrets.token_hex(6)}"
    password = f"Pw-{secrets.token_urlsafe(15)}"
    user = _expect(
        site.call(
            "POST",
            "/users",
            {"username": username, "email": f"{username}@example.com", "password": password},
        ),
        201,
        "sign-up",
    )
    token = _expect(
        site.call("POST", "/auth/token", {"username": username, "password": password}),
        200,
        "log-in",
    )["token"]
    board = _expect(
        site.call("POST", "/boards", {"name": "Drill board"}, token=token), 201, "new board"
    )
    body, content_type = _multipart({"board_id": board["id"]}, "drill.png", image_bytes())
    pin = _expect(
        site.call("POST", "/pins", raw=body, content_type=content_type, token=token),
        201,
        "new pin",
    )
    return Pinner(username, password, token, int(user["id"]), int(board["id"]), int(pin["id"]))


Group = Callable[[Pinner], str]


def by_master(topology: Topology) -> Group:
    """Pinners grouped by the master of their shard in ``topology`` (the default)."""
    return lambda pinner: topology.master_of(shard_of(pinner.user_id))


def ensure_pinners(
    site: Site,
    path: Path,
    topology: Topology,
    *,
    per_group: int,
    group: Group | None = None,
    groups: Iterable[str] | None = None,
    max_new: int = 40,
) -> list[Pinner]:
    """At least ``per_group`` pinners in each of ``groups`` (by default: on each master
    that takes new pinners): those kept in ``path`` that still work, and new ones (at most
    ``max_new``) until there are enough. Sign-ups land on random open shards."""
    label = group or by_master(topology)
    kept: list[Pinner] = []
    if path.exists():
        for entry in json.loads(path.read_text()):
            pinner = Pinner(**entry)
            if site.call("GET", "/me", token=pinner.token).status == 200:
                kept.append(pinner)
    if groups is None:  # a master with no open shard keeps the pinners it has
        groups = {topology.master_of(s) for s in _open_shards(topology)}
    wanted = sorted(groups)
    count = Counter(label(p) for p in kept)
    made = 0
    while any(count[g] < per_group for g in wanted):
        if made >= max_new:
            short = {g: per_group - count[g] for g in wanted if count[g] < per_group}
            raise SetupError(f"{made} new pinners still leave groups short: {short}")
        pinner = make_pinner(site)
        made += 1
        kept.append(pinner)
        count[label(pinner)] += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(p) for p in kept], indent=1))
    return kept


def _open_shards(topology: Topology) -> Iterable[int]:
    """Every open shard (a pinner signs up on one of them)."""
    for first, last in topology.open_ranges:
        for r in topology.ranges:
            yield from range(max(first, r.first), min(last, r.last) + 1)
