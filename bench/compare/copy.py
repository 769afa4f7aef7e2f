"""Copy pinboard's shard databases into the ORM build's database, on the server.

One ``INSERT … SELECT`` per shard database and table, so no row passes through Python:
objects from their JSON ``data`` (``JSON_VALUE``), with the full ID composed as
``(shard << 46) | (type << 36) | local_id``; relations from the forward mapping tables,
a row's ``sequence`` (microseconds since the epoch) becoming its ``created_at``.
Soft-deleted objects (``"active": false``) are left out, and so is every row that names
an object left out: each statement joins the ORM tables it points into. Foreign key
checks are off meanwhile, since those joins already guarantee every reference, and a save
may name a pin on a shard not copied yet; a save whose source was left out loses its
``saved_from`` at the end, as deleting the source would have done. The count columns are
computed last, from the rows copied.

The target must be freshly migrated (``python -m bench.compare.orm migrate``) on the same
MariaDB server as the shards. Pinboard writes every time as ``timezone.now().isoformat()``,
UTC, which is read back as such. API tokens are not copied (their secrets are not stored):
``add_tokens`` gives chosen pinners tokens the ORM build accepts.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from pinboard.catalog import CATALOG
from shardstore import compose

_SHARD_DATABASE = re.compile(r"db(\d{5})")


def _text(alias: str, path: str, default: str | None = None) -> str:
    value = f"JSON_VALUE({alias}.data, '$.{path}')"
    return value if default is None else f"IFNULL({value}, '{default}')"


def _id(alias: str, path: str) -> str:
    return f"CAST({_text(alias, path)} AS SIGNED)"


def _time(alias: str) -> str:
    """``created_at`` as stored, ``2024-05-01T10:00:00.123456+00:00``, as a DATETIME(6)."""
    return f"CAST(SUBSTRING_INDEX(REPLACE({_text(alias, 'created_at')}, 'T', ' '), '+', 1) AS DATETIME(6))"


def _active(alias: str) -> str:
    return f"IFNULL(JSON_EXTRACT({alias}.data, '$.active'), '') <> 'false'"


# A user's avatar is its files' keys by size, ``{"60": key, "120": key}``; "" for none.
_AVATAR_SMALL = _text("o", 'avatar."60"', "")
_AVATAR_LARGE = _text("o", 'avatar."120"', "")

#: Per object type, in the order they are copied (each row's references before it): the ORM
#: table, its columns, and the SELECT of its rows from one shard's table (alias ``o``).
OBJECTS = {
    "user": (
        "orm_pinner",
        "id, username, email, display_name, about, password, created_at,"
        " avatar_small_key, avatar_large_key",
        f"SELECT {{base}} + o.local_id, {_text('o', 'username')}, {_text('o', 'email')},"
        f" {_text('o', 'display_name', '')}, {_text('o', 'about', '')}, {_text('o', 'password')},"
        f" {_time('o')}, {_AVATAR_SMALL}, {_AVATAR_LARGE}"
        " FROM {db}.users o",
    ),
    "board": (
        "orm_board",
        "id, owner_id, name, slug, description, secret, created_at",
        f"SELECT {{base}} + o.local_id, owner.id, {_text('o', 'name')}, {_text('o', 'slug', '')},"
        f" {_text('o', 'description', '')},"
        " IFNULL(JSON_EXTRACT(o.data, '$.secret'), 'false') = 'true',"
        f" {_time('o')}"
        " FROM {db}.boards o"
        f" JOIN {{target}}.orm_pinner owner ON owner.id = {_id('o', 'owner_id')}",
    ),
    "pin": (
        "orm_pin",
        "id, board_id, owner_id, description, link, image_key, thumbnail_key,"
        " width, height, thumbnail_width, thumbnail_height, thumbnail_2x_key,"
        " thumbnail_2x_width, saved_from_id, created_at",
        f"SELECT {{base}} + o.local_id, board.id, owner.id, {_text('o', 'description', '')},"
        f" {_text('o', 'link', '')}, {_text('o', 'image.key')}, {_text('o', 'image.thumbnail_key')},"
        f" {_id('o', 'image.width')}, {_id('o', 'image.height')},"
        f" {_id('o', 'image.thumbnail_width')}, {_id('o', 'image.thumbnail_height')},"
        f" {_text('o', 'image.thumbnail_2x_key', '')}, {_id('o', 'image.thumbnail_2x_width')},"
        f" {_id('o', 'saved_from')}, {_time('o')}"
        " FROM {db}.pins o"
        f" JOIN {{target}}.orm_board board ON board.id = {_id('o', 'board_id')}"
        f" JOIN {{target}}.orm_pinner owner ON owner.id = {_id('o', 'owner_id')}",
    ),
    "comment": (
        "orm_comment",
        "id, pin_id, author_id, text, created_at",
        f"SELECT {{base}} + o.local_id, pin.id, author.id, {_text('o', 'text')}, {_time('o')}"
        " FROM {db}.comments o"
        f" JOIN {{target}}.orm_pin pin ON pin.id = {_id('o', 'pin_id')}"
        f" JOIN {{target}}.orm_pinner author ON author.id = {_id('o', 'author_id')}",
    ),
}

#: Per forward mapping table: the ORM table it becomes, its columns, and the ORM tables
#: of the rows its two ends name.
RELATIONS = {
    "user_likes_pins": ("orm_like", "user_id, pin_id", "orm_pinner", "orm_pin"),
    "user_follows_users": (
        "orm_userfollow",
        "follower_id, followed_id",
        "orm_pinner",
        "orm_pinner",
    ),
    "user_follows_boards": ("orm_boardfollow", "follower_id, board_id", "orm_pinner", "orm_board"),
    "user_unfollows_boards": ("orm_boardunfollow", "user_id, board_id", "orm_pinner", "orm_board"),
}
_RELATION_SELECT = (
    "SELECT m.from_id, m.to_id, TIMESTAMPADD(MICROSECOND, m.sequence, '1970-01-01')"
    " FROM {db}.{relation} m"
    " JOIN {target}.{from_table} a ON a.id = m.from_id JOIN {target}.{to_table} b ON b.id = m.to_id"
)

#: The count columns, computed once the rows are in: (table, column, the SELECT of ``k``, a
#: row's id, and ``n``, what to add to its count). In this order: a board's followers
#: start from its owner's, then its own are added and its unfollowers taken away.
COUNTS = [
    ("orm_pin", "like_count", "SELECT pin_id k, COUNT(*) n FROM {t}.orm_like GROUP BY k"),
    ("orm_pin", "save_count",
     "SELECT saved_from_id k, COUNT(*) n FROM {t}.orm_pin WHERE saved_from_id > 0 GROUP BY k"),
    ("orm_pin", "comment_count", "SELECT pin_id k, COUNT(*) n FROM {t}.orm_comment GROUP BY k"),
    ("orm_pinner", "follower_count",
     "SELECT followed_id k, COUNT(*) n FROM {t}.orm_userfollow GROUP BY k"),
    ("orm_pinner", "following_count",
     "SELECT follower_id k, COUNT(*) n FROM {t}.orm_userfollow GROUP BY k"),
    ("orm_pinner", "board_count",
     "SELECT owner_id k, COUNT(*) n FROM {t}.orm_board WHERE NOT secret GROUP BY k"),
    ("orm_pinner", "pin_count",
     "SELECT p.owner_id k, COUNT(*) n FROM {t}.orm_pin p"
     " JOIN {t}.orm_board b ON b.id = p.board_id WHERE NOT b.secret GROUP BY k"),
    ("orm_pinner", "like_count", "SELECT user_id k, COUNT(*) n FROM {t}.orm_like GROUP BY k"),
    ("orm_board", "pin_count", "SELECT board_id k, COUNT(*) n FROM {t}.orm_pin GROUP BY k"),
    ("orm_board", "follower_count",
     "SELECT b.id k, o.follower_count n FROM {t}.orm_board b"
     " JOIN {t}.orm_pinner o ON o.id = b.owner_id"),
    ("orm_board", "follower_count",
     "SELECT board_id k, COUNT(*) n FROM {t}.orm_boardfollow GROUP BY k"),
    ("orm_board", "follower_count",
     "SELECT board_id k, -COUNT(*) n FROM {t}.orm_boardunfollow GROUP BY k"),
]  # fmt: skip
_ADD_COUNT = (
    "UPDATE {t}.{table} x JOIN ({select}) c ON c.k = x.id SET x.{column} = x.{column} + c.n"
)

_FORGET_LOST_SOURCES = (
    "UPDATE {target}.orm_pin p LEFT JOIN {target}.orm_pin source ON source.id = p.saved_from_id"
    " SET p.saved_from_id = NULL WHERE p.saved_from_id IS NOT NULL AND source.id IS NULL"
)


def shard_of_database(name: str) -> int:
    match = _SHARD_DATABASE.fullmatch(name)
    if match is None:
        raise ValueError(f"{name!r} is not a shard database (db00000, db00001, ...)")
    return int(match.group(1))


def copy_into_orm(conn: Any, shard_databases: Iterable[str], target: str) -> dict[str, int]:
    """Copy every live row of ``shard_databases`` into the ORM database ``target`` (on the
    same server, freshly migrated); rows copied per ORM table."""
    shards = {name: shard_of_database(name) for name in shard_databases}
    cursor = conn.cursor()
    cursor.execute(f"SELECT 1 FROM {target}.orm_pinner LIMIT 1")
    if cursor.fetchall():
        raise ValueError(f"{target} already holds pinners: copy into a freshly migrated database")
    copied: Counter[str] = Counter()
    # Each statement reads the shards as committed when it starts, locking none of their rows.
    with _session(cursor, tx_isolation="READ-COMMITTED", foreign_key_checks="OFF"):
        for type_name, (table, columns, select) in OBJECTS.items():
            type_id = CATALOG.type(type_name).type_id
            for db, shard in shards.items():
                sql = f"INSERT INTO {target}.{table} ({columns}) {select} WHERE {_active('o')}"
                base = compose(shard, type_id, 0)
                copied[table] += _run(conn, sql.format(db=db, target=target, base=base))
        for relation, (table, columns, from_table, to_table) in RELATIONS.items():
            into = f"INSERT INTO {target}.{table} ({columns}, created_at) "
            for db in shards:
                select = _RELATION_SELECT.format(
                    db=db,
                    relation=relation,
                    target=target,
                    from_table=from_table,
                    to_table=to_table,
                )
                copied[table] += _run(conn, into + select)
        _run(conn, _FORGET_LOST_SOURCES.format(target=target))
        for table, column, select in COUNTS:
            sql = _ADD_COUNT.format(
                t=target, table=table, column=column, select=select.format(t=target)
            )
            _run(conn, sql)
    # Fresh index statistics, as after any bulk load, so the optimizer plans on the data.
    tables = [table for table, *_ in [*OBJECTS.values(), *RELATIONS.values()]]
    cursor.execute("ANALYZE TABLE " + ", ".join(f"{target}.{table}" for table in tables))
    cursor.fetchall()
    return dict(copied)


@contextmanager
def _session(cursor: Any, **settings: str) -> Iterator[None]:
    """The connection's session variables set to ``settings`` meanwhile, then as they were."""
    names = list(settings)
    cursor.execute("SELECT " + ", ".join(f"@@SESSION.{name}" for name in names))
    before = cursor.fetchone()
    assignments = ", ".join(f"SESSION {name} = %s" for name in names)
    cursor.execute(f"SET {assignments}", list(settings.values()))
    try:
        yield
    finally:
        cursor.execute(f"SET {assignments}", list(before))


def _run(conn: Any, sql: str) -> int:
    cursor = conn.cursor()
    rows = cursor.execute(sql)
    conn.commit()
    return int(rows)


def add_tokens(
    conn: Any, target: str, tokens: dict[int, str], *, lifetime: timedelta = timedelta(days=30)
) -> None:
    """Let pinner ``user_id`` use ``tokens[user_id]`` as ``Authorization: Token <token>`` on
    the ORM build: stored as its SHA-256, for ``lifetime``."""
    now = datetime.now(UTC).replace(tzinfo=None)  # Django keeps UTC in naive DATETIMEs
    rows = [
        (hashlib.sha256(token.encode()).hexdigest(), user_id, now, now + lifetime)
        for user_id, token in tokens.items()
    ]
    cursor = conn.cursor()
    cursor.executemany(
        f"INSERT INTO {target}.orm_apitoken (key_hash, user_id, created_at, expires_at)"
        " VALUES (%s, %s, %s, %s)",
        rows,
    )
    conn.commit()
