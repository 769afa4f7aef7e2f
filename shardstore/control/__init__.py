"""The control plane: where the shard maps live, and the operations that change them.

No Django here either: a management command, a console view, a Celery task or
a drill calls the same functions.

* ``documents``: the three documents (MySQL shards, Redis vshards, cache pools)
  and their validation;
* ``sources``: where they are kept (files or ZooKeeper), versioned, with
  history, compare-and-set publishing and watches.
"""
