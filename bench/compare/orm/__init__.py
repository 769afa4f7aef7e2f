"""pinboard's read and write endpoints as a Django team would write them on one database.

Models with foreign keys and indexes, counts kept in columns by the writes, keyset pages
and a pull-model home feed: no sharding, and no cache (``settings_cached`` is the same
build with every read cached in Redis by django-cacheops). The JSON and the pages are
pinboard's own (the same fields, the same templates), so a benchmark of the two compares
only how the data is read and written. Run commands with
``python -m bench.compare.orm <command>`` (``COMPARE_ORM_DATABASE`` names the database).
"""
