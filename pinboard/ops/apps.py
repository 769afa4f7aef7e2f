from django.apps import AppConfig


class OpsConfig(AppConfig):
    """The operators' side: the console at /ops/, the journal, shard-store commands."""

    name = "pinboard.ops"
    verbose_name = "operations"
