"""Backups of the shard hosts and their restore (``physical.py``), kept in a store
(``store.py``) with a manifest each (``manifest.py``)."""
