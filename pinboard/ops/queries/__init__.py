"""What the console reads: hosts and their shards, IDs, config documents, caches, Celery,
the journal. One module per page; views only call these and render."""
