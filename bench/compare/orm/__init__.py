"""pinboard's read and write endpoints as a Django team would write them on one database.

Models with foreign keys and indexes, counts as correlated subqueries, keyset pages and
a pull-model home feed: no cache, no sharding, no denormalized counters. The JSON and the
pages are pinboard's own (the same fields, the same templates), so a benchmark of the two
compares only how the data is read and written. Run commands with
``python -m bench.compare.orm <command>`` (``COMPARE_ORM_DATABASE`` names the database).
"""
