"""shardstore: Pinterest-style ID-sharded storage on MySQL (or embedded SQLite).

    >>> from shardstore import Store, Topology
    >>> store = Store(Topology.single_host("sqlite:///var/shards/db1", shard_count=16))
    >>> init_shards(store)                                   # create every shard's tables
    >>> user = store.objects("user").create(store.new_user_shard(), {"username": "ada"})
    >>> board = store.objects("board").create(shard_of(user), {"name": "Recipes"})
    >>> store.mapping("user_has_boards").add(user, board)
    >>> store.mapping("user_has_boards").page(user).ids
    [board]

No Django here: a web process, a Celery worker or a script each build a Store
from a Topology and use it alone.
"""

from .catalog import CATALOG, Catalog, Lookup, ObjectType, Relation
from .exceptions import (
    DuplicateKey,
    InvalidCursor,
    InvalidId,
    InvalidKey,
    InvalidTopology,
    NotFound,
    ObjectTooLarge,
    ShardReadOnly,
    ShardStoreError,
    ShardUnavailable,
    UnknownRelation,
    UnknownShard,
    UnknownType,
    WriteConflict,
    WrongType,
)
from .ids import ObjectId, compose, decompose, group_by_shard, shard_of
from .interface import (
    LookupTableInterface,
    MappingTableInterface,
    ObjectTableInterface,
    Page,
    StoreInterface,
)
from .schema import init_shards
from .store import QueryCount, Store
from .topology import ShardRange, Topology

__all__ = [
    "CATALOG",
    "Catalog",
    "DuplicateKey",
    "InvalidCursor",
    "InvalidId",
    "InvalidKey",
    "InvalidTopology",
    "Lookup",
    "LookupTableInterface",
    "MappingTableInterface",
    "NotFound",
    "ObjectId",
    "ObjectTableInterface",
    "ObjectTooLarge",
    "ObjectType",
    "Page",
    "QueryCount",
    "Relation",
    "ShardRange",
    "ShardReadOnly",
    "ShardStoreError",
    "ShardUnavailable",
    "Store",
    "StoreInterface",
    "Topology",
    "UnknownRelation",
    "UnknownShard",
    "UnknownType",
    "WriteConflict",
    "WrongType",
    "compose",
    "decompose",
    "group_by_shard",
    "init_shards",
    "shard_of",
]
