"""shardstore: Pinterest-style ID-sharded storage on MySQL (or embedded SQLite).

    >>> from shardstore import Catalog, ObjectType, Relation, Store, Topology
    >>> catalog = Catalog(                                   # the user's data model
    ...     types=[ObjectType("author", 1, "authors"), ObjectType("album", 2, "albums")],
    ...     relations=[Relation("author_has_albums", "author", "album")],
    ...     lookups=[],
    ... )
    >>> topology = Topology.single_host("sqlite:///var/shards/db1", shard_count=16)
    >>> store = Store(topology, catalog=catalog)
    >>> init_shards(store)                                   # create every shard's tables
    >>> ada = store.objects("author").create(store.new_user_shard(), {"name": "ada"})
    >>> album = store.objects("album").create(shard_of(ada), {"name": "Recipes"})
    >>> store.mapping("author_has_albums").add(ada, album)
    >>> store.mapping("author_has_albums").page(ada).ids
    [album]

No Django here, and no data model of its own: a web process, a Celery worker or a
script each build a Store from a Topology and the site's Catalog, and use it alone.
"""

from .catalog import Catalog, Lookup, ObjectType, Relation, inverse_pair
from .exceptions import (
    AlreadyCreated,
    DuplicateKey,
    InvalidCursor,
    InvalidId,
    InvalidKey,
    InvalidTopology,
    KeyReused,
    NotFound,
    ObjectTooLarge,
    ShardMoving,
    ShardReadOnly,
    ShardStoreError,
    ShardUnavailable,
    UnknownRelation,
    UnknownShard,
    UnknownType,
    WriteConflict,
    WrongType,
)
from .idempotency import IdempotencyKey, IdempotencyKeys
from .ids import ObjectId, compose, decompose, group_by_shard, shard_of
from .interface import (
    LookupTableInterface,
    MappingTableInterface,
    ObjectTableInterface,
    Page,
    QueryCount,
    StoreInterface,
)
from .schema import init_shards
from .store import Store
from .topology import ShardRange, Topology

__all__ = [
    "AlreadyCreated",
    "Catalog",
    "DuplicateKey",
    "IdempotencyKey",
    "IdempotencyKeys",
    "InvalidCursor",
    "InvalidId",
    "InvalidKey",
    "InvalidTopology",
    "KeyReused",
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
    "ShardMoving",
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
    "inverse_pair",
    "shard_of",
]
