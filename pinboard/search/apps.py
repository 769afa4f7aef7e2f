from django.apps import AppConfig


class SearchConfig(AppConfig):
    """Search: pins, boards and pinners by their words, from an index apart from the shards."""

    name = "pinboard.search"
