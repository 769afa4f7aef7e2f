from django.apps import AppConfig


class FeedsConfig(AppConfig):
    """Home feeds: fan-out of new pins, merges on follow, rebuilds on return."""

    name = "pinboard.feeds"
