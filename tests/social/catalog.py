"""The catalog the social model's tests open their stores with: the tables the social model
owns (``social.catalog``), over object types of these tests' own (with the site's ids, which
``vshard_users`` composes IDs with)."""

import social.catalog
from shardstore import Catalog, ObjectType

CATALOG = Catalog(
    types=[
        ObjectType("pin", 1, "pins", pool="pins"),
        ObjectType("board", 2, "boards", pool="boards"),
        ObjectType("user", 3, "users", pool="users"),
    ],
    relations=social.catalog.RELATIONS,
    lookups=[],
)
