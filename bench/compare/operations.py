"""The operations both builds serve, and the paths that ask for them.

Each read operation is one URL pattern over one kind of entity. The same path names the
same entity on both sides (the plain ORM build keeps pinboard's 64-bit IDs), so one list
of paths drives both.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .dataset import Dataset

#: What a request needs to say who is asking: the feed is a signed-in page.
Tokens = dict[int, str]  # pinner -> API token


@dataclass(frozen=True)
class Operation:
    name: str
    entity: str  # "pinner", "board", "pin" or "viewer" (a signed-in pinner)
    template: str  # a path, with {id}, {username} or {slug}
    page: bool = False  # an HTML page (else a JSON API endpoint)

    def path(self, data: Dataset, entity: int, tokens: Tokens) -> str:
        """A line of a wrk path file: the path, and a tab and a token for a signed-in one."""
        if self.entity == "viewer":
            return f"{self.template}\t{tokens[entity]}"
        if self.entity == "board":
            owner = data.owner_of[entity]
            return self.template.format(
                id=entity, username=data.usernames[owner], slug=data.slugs[entity]
            )
        if self.entity == "pinner":
            return self.template.format(id=entity, username=data.usernames[entity])
        return self.template.format(id=entity)


OPERATIONS = [
    Operation("user", "pinner", "/api/v1/users/{id}"),
    Operation("user boards", "pinner", "/api/v1/users/{id}/boards"),
    Operation("board", "board", "/api/v1/boards/{id}"),
    Operation("board pins", "board", "/api/v1/boards/{id}/pins"),
    Operation("pin", "pin", "/api/v1/pins/{id}"),
    Operation("pin comments", "pin", "/api/v1/pins/{id}/comments"),
    Operation("pin likes", "pin", "/api/v1/pins/{id}/likes"),
    Operation("home feed", "viewer", "/api/v1/feed"),
    Operation("profile page", "pinner", "/{username}/", page=True),
    Operation("board page", "board", "/{username}/{slug}/", page=True),
    Operation("pin page", "pin", "/pin/{id}/", page=True),
]


def population(data: Dataset, entity: str, tokens: Tokens, *, probes: bool) -> list[int]:
    """The entities an operation picks from: the probes' (same content at every size), or all."""
    if entity == "viewer":
        return [p for p in (data.probes if probes else list(tokens)) if p in tokens]
    if entity == "pinner":
        return list(data.probes) if probes else list(data.usernames)
    if entity == "board":
        return data.probe_boards if probes else list(data.owner_of)
    return list(data.probe_pins) if probes else list(data.pins)


def sample_paths(
    op: Operation, data: Dataset, tokens: Tokens, rng: random.Random, n: int, *, probes: bool,
    distinct: bool = False,
) -> list[str]:  # fmt: skip
    """``n`` paths of random entities (each entity once at most with ``distinct``)."""
    entities = population(data, op.entity, tokens, probes=probes)
    chosen = rng.sample(entities, min(n, len(entities))) if distinct else rng.choices(entities, k=n)
    return [op.path(data, e, tokens) for e in chosen]
