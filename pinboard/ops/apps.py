from django.apps import AppConfig


class OpsConfig(AppConfig):
    """The operators' side: shard-store commands (and, later, the console)."""

    name = "pinboard.ops"
