"""The fixtures of the comparison tests: a private MariaDB with pinboard's shards and the
ORM build's database side by side, the cast written through pinboard's actions, the ORM
build filled from the shards by ``copy_into_orm``, and the same build with cacheops."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import unavailable
from toolkit.images import image_upload
from toolkit.servers.mariadb import MariaDBServer
from toolkit.servers.redis import RedisServer

from .orm_world import ORM_DATABASE, PASSWORD, ROOT, SHARDS, Cast, OrmBuild


@pytest.fixture(scope="module")
def mariadb() -> Iterator[MariaDBServer]:
    """A MariaDB of this module alone: pinboard's shards and the ORM database side by side."""
    if importlib.util.find_spec("MySQLdb") is None:
        unavailable("MariaDB", "the MySQLdb module is not installed (requirements-mysql.txt)")
    availability = MariaDBServer.available()
    if not availability:
        unavailable("MariaDB", availability.reason)
    with MariaDBServer() as server:
        yield server


@pytest.fixture(scope="module")
def plane(mariadb: MariaDBServer) -> Iterator[Any]:
    """pinboard's data plane on the module's MariaDB: 4 shards, in-process caches and Redis."""
    from pinboard.catalog import CACHE_POOLS, CATALOG
    from pinboard.data_plane import use
    from pinboard.plane import build
    from shardstore import Store, Topology, init_shards
    from shardstore.cache import LocalPool
    from shardstore.redis_shards import RedisTopology

    topology = Topology.single_host(f"mysql://root@{mariadb.address}", shard_count=SHARDS)
    store = Store(topology, catalog=CATALOG)
    init_shards(store)
    built = build(
        store, {name: LocalPool(name) for name in CACHE_POOLS}, RedisTopology.single("memory://orm")
    )
    previous = use(built)
    yield built
    use(previous)
    built.close()


@pytest.fixture(scope="module")
def cast(plane: Any) -> Cast:
    """ann (with an avatar) has Recipes (55 pins), Garden (3) and an empty board; bob follows
    ann but unfollowed Garden, saved a recipe and has 2 pins of his own; cat follows Garden
    alone; dan follows bob; bob, cat and dan like and comment on one recipe; ann deleted
    another. wendy and xavier are for the writes."""
    from pinboard.boards.actions import create_board
    from pinboard.follows.actions import follow_board, follow_user, unfollow_board
    from pinboard.likes.actions import like
    from pinboard.pins.actions import add_comment, create_pin, delete_pin, save_pin
    from pinboard.users.actions import set_avatar, sign_up, update_profile
    from pinboard.users.tokens import issue_token

    names = ("ann", "bob", "cat", "dan", "wendy", "xavier")
    users = {n: sign_up(n, f"{n}@example.com", PASSWORD) for n in names}
    about = 'Cooks & gardens, "mostly" ñ 😀\nTwo lines'
    update_profile(users["ann"]["id"], {"display_name": "Ann Lee 🌱", "about": about})
    set_avatar(users["ann"]["id"], image_upload("ann.png", size=(90, 60)))
    uid = {n: u["id"] for n, u in users.items()}

    def board(owner: str, name: str, description: str = "") -> dict[str, Any]:
        return create_board(uid[owner], name, description)

    boards = {
        "recipes": board("ann", "Recipes", "Things to cook"),
        "garden": board("ann", "Garden"),
        "empty": board("ann", "Empty board"),
        "bobs": board("bob", "Bob things"),
        "cats": board("cat", "Cat stuff"),
        "x1": board("xavier", "Xavier one"),
        "x2": board("xavier", "Xavier two"),
        "wendys": board("wendy", "Wendy saves"),
    }

    def pin(
        owner: str, board_name: str, description: str, link: str = "", *, wide: bool = False
    ) -> dict[str, Any]:
        # A wide image has a sharper thumbnail too (the cards' srcset).
        image = image_upload(size=(600, 400)) if wide else image_upload()
        return create_pin(uid[owner], boards[board_name]["id"], image, description, link)

    links = [f"https://example.com/r/{n}" if n % 3 else "" for n in range(55)]
    recipes = [
        pin("ann", "recipes", f"Recipe {n}", link, wide=n % 5 == 0) for n, link in enumerate(links)
    ]
    pins = {f"recipe{n}": p for n, p in enumerate(recipes)}
    pins["tomatoes"] = pin("ann", "garden", "Tomatoes\nand basil ✓")
    pins["fence"] = pin("ann", "garden", "")
    pins["roses"] = pin("ann", "garden", "Roses <b>red</b> & 'white'")
    pins["bob1"] = pin("bob", "bobs", "Bob one")
    pins["bob2"] = pin("bob", "bobs", "Bob two")
    pins["cat1"] = pin("cat", "cats", "Cat one")
    pins["x1a"] = pin("xavier", "x1", "Xavier one a")
    pins["x1b"] = pin("xavier", "x1", "Xavier one b")
    pins["x2a"] = pin("xavier", "x2", "Xavier two a")
    pins["saved"] = save_pin(uid["bob"], recipes[10]["id"], boards["bobs"]["id"])
    liked = recipes[10]["id"]
    for n, fan in enumerate(("bob", "cat", "dan")):
        like(uid[fan], liked)
        add_comment(uid[fan], liked, ["Love this!", "Saving for later ✓", "So <good>"][n])
    follow_user(uid["bob"], uid["ann"])
    unfollow_board(uid["bob"], boards["garden"]["id"])
    follow_board(uid["cat"], boards["garden"]["id"])
    follow_user(uid["dan"], uid["bob"])
    follow_board(uid["wendy"], boards["x1"]["id"])
    delete_pin(uid["ann"], recipes[1]["id"])
    del pins["recipe1"]
    tokens = {n: issue_token(users[n])["token"] for n in ("bob", "cat", "dan", "wendy")}
    return Cast(users, boards, pins, tokens, recipes[1]["id"])


@pytest.fixture(scope="module")
def orm(mariadb: MariaDBServer, cast: Cast) -> OrmBuild:
    """The ORM database, migrated, filled by copy_into_orm, with the cast's tokens."""
    import MySQLdb

    from bench.compare.copy import add_tokens, copy_into_orm
    from shardstore.topology import database_name

    mysql = {"host": mariadb.host, "port": mariadb.port, "user": "root", "charset": "utf8mb4"}
    env = {**os.environ, "COMPARE_ORM_DATABASE": f"mysql://root@{mariadb.address}/{ORM_DATABASE}"}
    conn = MySQLdb.connect(**mysql)
    try:
        conn.cursor().execute(f"CREATE DATABASE {ORM_DATABASE} CHARACTER SET utf8mb4")
        migrate = [sys.executable, "-m", "bench.compare.orm", "migrate", "--verbosity", "0"]
        subprocess.run(migrate, cwd=ROOT, env=env, check=True, timeout=120)
        copied = copy_into_orm(conn, [database_name(n) for n in range(SHARDS)], ORM_DATABASE)
        add_tokens(conn, ORM_DATABASE, {cast.users[n]["id"]: t for n, t in cast.tokens.items()})
    finally:
        conn.close()
    return OrmBuild(env, mysql, copied)


@pytest.fixture
def cached_orm(orm: OrmBuild, redis_server: RedisServer) -> OrmBuild:
    """The ORM build with cacheops (settings_cached) on the same database, its cache in a
    database of the session's Redis, emptied first: the plain build's writes go around it."""
    import redis

    url = redis_server.url.rsplit("/", 1)[0] + "/7"
    with redis.Redis.from_url(url) as cache:
        cache.flushdb()
    settings = {"COMPARE_ORM_SETTINGS": "bench.compare.orm.settings_cached"}
    return OrmBuild({**orm.env, **settings, "COMPARE_ORM_REDIS": url}, orm.mysql, orm.copied)
