"""Close shards to new users: new sign-ups stop landing in them (existing users stay).

One step: publish the shard map with ``first..last`` taken out of the open
ranges. At least one shard must stay open, or no one could sign up.
"""

from __future__ import annotations

from ..exceptions import InvalidTopology
from . import documents
from .config_source import ConfigSource
from .plans import Plan
from .publish import publish_step


def plan_close_range(source: ConfigSource, *, first: int, last: int, author: str) -> Plan:
    current = source.current(documents.SHARDS)
    document = current.document
    remaining: list[list[int]] = []
    for a, b in document["open"]:
        if a < first:
            remaining.append([a, min(b, first - 1)])
        if b > last:
            remaining.append([max(a, last + 1), b])
    if remaining == [list(r) for r in document["open"]]:
        raise InvalidTopology(f"shards {first}..{last} are not open to new users")
    if not remaining:
        raise InvalidTopology("closing these shards would leave none for new users")
    new = documents.validate(documents.SHARDS, {**document, "open": remaining})

    reason = f"close shards {first}..{last} to new users"
    step = publish_step(
        source, current, new, author=author, reason=reason, change=f"open {remaining}"
    )
    return Plan(
        "close-range",
        f"close shards {first}..{last} to new users; open stays {remaining}",
        [step],
        {"first": first, "last": last},
    )
