"""pinboard side by side with the same site written as plain Django ORM on one MySQL database.

``orm/`` is that build (its models, API endpoints and pages); ``copy.py`` fills its database
from pinboard's shard databases, so both serve the same data under the same URLs.
"""
