"""pinboard's data model, declared once and handed to every shard store the site opens:
its object types (with the cache pool of each), mapping tables and lookups, and the cache
pools every deployment of the site has."""

import social.catalog
from shardstore import Catalog, Lookup, ObjectType, Relation, inverse_pair
from shardstore.control import documents

#: The pools every deployment has, one per kind of data (a caches document names each).
CACHE_POOLS = ("users", "boards", "pins", "lists")
documents.require_pools(CACHE_POOLS)

CATALOG = Catalog(
    types=[
        ObjectType("pin", 1, "pins", pool="pins"),
        ObjectType("board", 2, "boards", pool="boards"),
        ObjectType("user", 3, "users", pool="users"),
        ObjectType("comment", 4, "comments", pool="pins"),
        # API tokens: a hash of the secret, an expiry.
        ObjectType("token", 5, "tokens", pool="users"),
    ],
    relations=[
        # The social model's tables: follows, and a pinner's and a board's lists.
        *social.catalog.RELATIONS,
        *inverse_pair("user_likes_pins", "pin_liked_by_users", "user", "pin"),
        # Those of a pinner's likes that are of pins on secret boards, which the count others
        # see leaves out (pinboard/likes/actions.py).
        Relation("user_likes_secret_pins", "user", "pin"),
        # A group board's collaborators (also kept in the board object, for access checks)
        # and the boards a pinner collaborates on (their profile lists them).
        *inverse_pair("board_has_collaborators", "user_collaborates_on_boards", "board", "user"),
        Relation("pin_has_comments", "pin", "comment"),
        # A pinner's comments, on anyone's pins: a deleted account's purge finds them here.
        Relation("user_has_comments", "user", "comment"),
        Relation("pin_saved_as_pins", "pin", "pin"),
        Relation("user_has_tokens", "user", "token"),
        # The pin that uploaded an image -> every pin showing it (itself and its saves):
        # the files go when the last of them is deleted.
        Relation("pin_image_used_by_pins", "pin", "pin"),
    ],
    lookups=[
        Lookup("username", "user"),
        Lookup("email", "user"),
        Lookup("board_slug", "board"),  # "<owner id>:<slug>", so each pinner has their own slugs
    ],
)
