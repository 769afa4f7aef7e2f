"""The Redis drill: the follower graph's Redis is killed (``kill -9``) and wiped under load,
then the graph and the home feeds are rebuilt from MySQL, the source of truth.

Before: the load's pinners follow one another in a ring (each the next pinner, and the
board of the one after), through the API, and the drill notes what the site shows each
of them (home feed, followers, following). Then Redis is killed, started again on its
port and emptied (``FLUSHALL``: its own append-only file would otherwise bring most keys
back), and an operator's ``manage.py follower_graph rebuild`` runs (the graph, then every
pinner's feed). After: ``follower_graph check`` must find no graph key to repair, no stray
key and no feed to repair, and the site must show every pinner exactly what it showed
before.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from toolkit.load.api import Site
from toolkit.load.pinners import Pinner

from .base import SETTLE, WARM_UP, DrillError, Drills, Result

SERVER = "redis"
#: Pages of 100 read per list, at most (the drill's lists are short).
MAX_PAGES = 20
_GRAPH = re.compile(r"(\d+) keys checked, would repair (\d+), found (\d+) stray")
_FEEDS = re.compile(r"home feeds: (\d+) (?:active )?feeds checked, would repair (\d+)")


def redis_wipe(d: Drills, result: Result) -> None:
    import redis

    process = d.process(SERVER)
    url = f"redis://127.0.0.1:{d.cluster.port(SERVER)}/0"
    result.title = f"{SERVER} ({url}) killed and wiped under load; graph and feeds rebuilt"
    topology = d.topology()
    load = d.load(topology)
    pinners = sorted((p for g in load.pinners.values() for p in g), key=lambda p: p.user_id)
    follows = _follow_ring(d.site, pinners)
    before = {p.user_id: _shown(d.site, p) for p in pinners}
    load.wait(WARM_UP)

    client = redis.Redis.from_url(url)
    try:
        keys_before = client.dbsize()
        d.say(f"kill -9 {SERVER} (pid {process.pid})")
        process.halt(kill=True)
        load.wait(1)
        process.restart()
        restored = client.dbsize()
        client.flushall()
        wiped = client.dbsize()
    finally:
        client.close()
    result.figure(
        f"{len(pinners)} pinners, {follows} follows made; keys {keys_before} before the kill,"
        f" {restored} after the restart (append-only file), {wiped} after the wipe"
    )
    d.say("manage.py follower_graph rebuild")
    rebuild = d.manage("follower_graph", "rebuild", timeout=1200)
    check = d.manage("follower_graph", "check", timeout=1200)
    after = {p.user_id: _shown(d.site, p) for p in pinners}
    load.wait(SETTLE)
    d.finish(result, load)

    result.figure(f"rebuild: exit {rebuild.returncode} in {rebuild.seconds:.1f} s")
    result.figures += [f"| {line}" for line in rebuild.output.splitlines() if "checked" in line]
    result.figure(f"check: exit {check.returncode} in {check.seconds:.1f} s")
    result.bound("rebuild succeeded", rebuild.returncode == 0, f"exit {rebuild.returncode}")
    graph, feeds = _GRAPH.search(check.output), _FEEDS.search(check.output)
    result.bound(
        "graph check after the rebuild: keys to repair, stray keys",
        check.returncode == 0 and graph is not None and (graph[2], graph[3]) == ("0", "0"),
        "unreadable output" if graph is None else f"{graph[2]}, {graph[3]} of {graph[1]} keys",
    )
    result.bound(
        "feed check after the rebuild: feeds to repair",
        check.returncode == 0 and feeds is not None and feeds[2] == "0",
        "unreadable output" if feeds is None else f"{feeds[2]} of {feeds[1]} feeds",
    )
    for what, index in (("home feeds", 0), ("followers", 1), ("following", 2)):
        differ = [uid for uid in before if before[uid][index] != after[uid][index]]
        shown = sum(len(v[index]) for v in after.values())
        result.bound(
            f"{what} shown as before the wipe",
            not differ,
            f"{len(pinners) - len(differ)} of {len(pinners)} pinners the same ({shown} entries)",
        )


def _follow_ring(site: Site, pinners: list[Pinner]) -> int:
    """Each pinner follows the next one and the board of the one after (idempotent)."""
    n, made = len(pinners), 0
    if n < 3:
        raise DrillError("the Redis drill needs at least 3 pinners")
    for i, p in enumerate(pinners):
        user, board = pinners[(i + 1) % n], pinners[(i + 2) % n]
        for path in (f"/users/{user.user_id}/follow", f"/boards/{board.board_id}/follow"):
            reply = site.call("PUT", path, token=p.token)
            if reply.status != 204:
                raise DrillError(f"PUT {path}: HTTP {reply.status} {reply.body[:200]!r}")
            made += 1
    return made


def _shown(site: Site, p: Pinner) -> tuple[list[str], list[str], list[str]]:
    """What the site shows the pinner: home feed, followers, following (IDs, in order)."""
    return (
        _ids(site, "/feed", p.token),
        _ids(site, f"/users/{p.user_id}/followers", None),
        _ids(site, f"/users/{p.user_id}/following", None),
    )


def _ids(site: Site, path: str, token: str | None) -> list[str]:
    ids: list[str] = []
    cursor: str | None = None
    for _page in range(MAX_PAGES):
        query = f"?limit=100{f'&cursor={quote(cursor)}' if cursor else ''}"
        reply = site.call("GET", path + query, token=token)
        if reply.status != 200:
            raise DrillError(f"GET {path}: HTTP {reply.status} {reply.body[:200]!r}")
        body: dict[str, Any] = reply.json()
        ids += [str(item["id"]) for item in body["items"]]
        cursor = body.get("next")
        if not cursor:
            return ids
    raise DrillError(f"GET {path}: more than {MAX_PAGES} pages")
