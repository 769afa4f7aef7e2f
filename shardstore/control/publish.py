"""Publish a config document by hand, or roll back to an earlier version.

Both are plans of one step, journaled like every operation: the dry run shows
the validation result and the diff against the version in force; the publish
is compare-and-set on that version. A rollback publishes the old document as
a new version (history only grows).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from ..replicas import replicas_of
from . import documents
from .config_source import (
    LEASE_MARGIN,
    LEASE_SECONDS,
    ConfigSource,
    NotPublished,
    Revision,
    VersionConflict,
)
from .locks import CONFIG
from .mysql_hosts import MySQLHost
from .plans import Plan, Step, StepFailed

#: How each document is called in plans and notes.
TITLES = {documents.SHARDS: "shard map", documents.REDIS: "redis map", documents.CACHES: "caches"}


def publish_step(
    source: ConfigSource,
    current: Revision,
    document: Mapping[str, Any],
    *,
    author: str,
    reason: str,
    change: str,
    hosts: tuple[str, ...] = (),
    commits: bool = False,
) -> Step:
    """The step that publishes ``document`` as the version after ``current``, only if
    ``current`` is still the one in force (so a plan made from it cannot undo a publish
    that came in between): ``publish shard map v4: <change>``. Its undo publishes
    ``current``'s document again, if this step's version is the one in force. The plan
    holds the ``CONFIG`` lock."""
    title = TITLES[current.name]
    mine = current.version + 1

    def publish() -> str:
        published = source.publish(
            current.name, document, author=author, reason=reason, expect_version=current.version
        )
        return f"{title} version {published.version} published"

    def unpublish() -> str:
        if source.current(current.name).version != mine or not published():
            return f"{title} v{mine} was not published: nothing to take back"
        back = source.publish(
            current.name,
            {**current.document},
            author=author,
            reason=f"undo: {reason}",
            expect_version=mine,
        )
        return f"{title} v{current.version}'s document published again as v{back.version}"

    def published() -> bool:
        """This step's version is published (a later one too: no other operation publishes
        while this one's entry is open)."""
        try:
            return source.revision(current.name, mine).reason == reason
        except NotPublished:
            return False

    return Step(
        f"publish {title} v{mine}: {change}",
        (*hosts, CONFIG),
        publish,
        unpublish,
        commits,
        published if commits else None,
    )


#: How long every process is given to swap in a new version and report it: past a lease,
#: so that one cut off from its source is waited out rather than failing the operation
#: (it has stopped writing to Redis; its MySQL writes meet the operation's MySQL fence).
FOLLOW_SECONDS = LEASE_SECONDS + LEASE_MARGIN + 2.0


def followed_step(
    source: ConfigSource,
    name: str,
    version: int,
    *,
    hosts: tuple[str, ...] = (),
    timeout: float = FOLLOW_SECONDS,
) -> Step:
    """The step that waits until every live process reports ``version`` of ``name`` in
    force, its writes under older versions drained (``ConfigFollower``, ``WriteFence``)."""
    title = TITLES[name]

    def wait() -> str:
        started = time.monotonic()
        deadline = started + timeout
        last = ""  # the process waited on last: the one to look at if this step is slow
        while True:
            followers = source.followers()
            behind = sorted(p for p, v in followers.items() if v.get(name, 0) < version)
            if not behind:
                waited = (
                    f", the last ({last}) after {time.monotonic() - started:.2f}s" if last else ""
                )
                return f"{len(followers)} processes follow {title} v{version}{waited}"
            last = behind[-1]
            if time.monotonic() >= deadline:
                raise StepFailed(
                    f"{len(behind)} of {len(followers)} processes still on an older {title}"
                    f" after {timeout:g}s: {', '.join(behind[:5])}"
                )
            time.sleep(0.05)

    return Step(f"wait until every process follows {title} v{version}", hosts, wait)


def plan_publish(
    source: ConfigSource,
    name: str,
    document: Mapping[str, Any],
    *,
    author: str,
    reason: str,
    expect_version: int | None = None,
    connect: Callable[[str], MySQLHost] | None = None,
) -> Plan:
    """The plan to publish ``document`` by hand. With ``connect``, a shard map that names
    master a host the map in force has as a replica first checks it: it answers and
    replicates from no one (a rollback across a failover would name a read-only replica)."""
    try:
        current = source.current(name)
        base, old = current.version, current.document
    except NotPublished:
        base, old = 0, {}
    if expect_version is not None and expect_version != base:
        raise VersionConflict(f"{name}: version {base} is current, not {expect_version}")
    new = documents.validate(name, {**document, "version": base + 1})
    changes = documents.diff(old, new) if old else "(first version)"

    summary = f"publish {TITLES[name]} v{base + 1}: {reason}"

    def publish() -> str:
        published = source.publish(name, new, author=author, reason=reason, expect_version=base)
        return f"{TITLES[name]} version {published.version} published"

    steps = [Step(f"publish {TITLES[name]} v{base + 1}", (CONFIG,), publish)]
    masters = _new_masters(old, new) if name == documents.SHARDS and connect else {}
    if masters and connect:
        steps.insert(0, _check_masters_step(connect, masters))
    return Plan("publish", summary, steps, {"name": name, "version": base + 1, "diff": changes})


def _new_masters(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, str]:
    """The MySQL hosts ``old`` names only as replicas that ``new`` names master, by name:
    their addresses (a replica named master takes no write: what a rollback across a
    failover would do). A host new to the map is not looked at: bring-up opens it."""
    masters = {r["master"] for r in old.get("ranges", [])}
    replicas = {name for r in old.get("ranges", []) for name in replicas_of(r)} - masters
    return {
        r["master"]: new["hosts"][r["master"]]
        for r in new["ranges"]
        if r["master"] in replicas and str(new["hosts"][r["master"]]).startswith("mysql://")
    }


def _check_masters_step(connect: Callable[[str], MySQLHost], masters: dict[str, str]) -> Step:
    def check() -> str:
        notes = []
        for host, address in sorted(masters.items()):
            with connect(address) as server:
                status, read_only = server.replica_status(), server.read_only()
            if status is not None:
                raise StepFailed(
                    f"{host} replicates from {status.source}: as master its shards would take"
                    " no write. Fail over to it (`failover`) instead"
                )
            notes.append(f"{host} replicates from no one" + (", read_only" if read_only else ""))
        return "; ".join(notes)

    names = ", ".join(sorted(masters))
    return Step(f"check that {names} can be master: answers, replicates from no one", tuple(sorted(masters)), check)  # fmt: skip


def plan_rollback(
    source: ConfigSource,
    name: str,
    version: int,
    *,
    author: str,
    reason: str,
    connect: Callable[[str], MySQLHost] | None = None,
) -> Plan:
    old = source.revision(name, version)
    plan = plan_publish(
        source,
        name,
        old.document,
        author=author,
        reason=f"rollback to v{version}: {reason}",
        connect=connect,
    )
    return Plan("rollback", plan.summary, plan.steps, {**plan.params, "from_version": version})
