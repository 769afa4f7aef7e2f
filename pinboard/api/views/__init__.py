"""API views, one module per resource: parse, check access, call actions or queries, respond.

No view touches SQL: reads go through ``<domain>.queries``, writes through
``<domain>.actions``, and the HTTP plumbing lives in ``pinboard.api.http``.
Each handler declares its operation (``@operation``: schemas, statuses, token),
from which the OpenAPI document is made.
"""
