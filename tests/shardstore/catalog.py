"""The data model the library's tests open their stores with: a small notes service's
(the library has none of its own). It has every kind of entry a catalog may declare:
types sharing a cache pool, one-way relations and inverse pairs, relations from a type to
itself, and lookups, one of them on a composite key."""

from shardstore import Catalog, Lookup, ObjectType, Relation, Store, Topology, inverse_pair

CATALOG = Catalog(
    types=[
        ObjectType("note", 1, "notes", pool="notes"),
        ObjectType("folder", 2, "folders", pool="folders"),
        ObjectType("account", 3, "accounts", pool="accounts"),
        ObjectType("tag", 4, "tags", pool="notes"),
        # Sign-in tickets: a hash of the ticket, an expiry.
        ObjectType("ticket", 5, "tickets", pool="accounts"),
    ],
    relations=[
        Relation("account_has_folders", "account", "folder"),
        Relation("account_has_notes", "account", "note"),
        *inverse_pair("folder_has_notes", "note_in_folder", "folder", "note"),
        *inverse_pair("account_stars_notes", "note_starred_by_accounts", "account", "note"),
        *inverse_pair(
            "account_watches_accounts", "account_watched_by_accounts", "account", "account"
        ),
        *inverse_pair("account_watches_folders", "folder_watched_by_accounts", "account", "folder"),
        *inverse_pair("account_mutes_folders", "folder_muted_by_accounts", "account", "folder"),
        Relation("note_has_tags", "note", "tag"),
        Relation("note_copied_as_notes", "note", "note"),
        Relation("account_has_tickets", "account", "ticket"),
        # The note that uploaded an attachment -> every note showing it (itself and its
        # copies): the file goes when the last of them is deleted.
        Relation("note_file_used_by_notes", "note", "note"),
    ],
    lookups=[
        Lookup("login", "account"),
        Lookup("mailbox", "account"),
        Lookup("folder_path", "folder"),  # "<account id>:<path>": each account has its own paths
    ],
)

#: The cache pools this catalog's types name, and the library's own pool of mapping lists.
CACHE_POOLS = ("accounts", "folders", "notes", "lists")


def open_store(topology: Topology) -> Store:
    """A store on ``topology`` with this catalog: what a plan is given to open one."""
    return Store(topology, catalog=CATALOG)
