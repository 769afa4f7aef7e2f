from django.apps import AppConfig


class OpsConfig(AppConfig):
    """The operators' side: the console at /ops/, the journal, shard-store commands."""

    name = "pinboard.ops"
    verbose_name = "operations"

    def ready(self) -> None:
        from . import reauth  # noqa: F401 - staff log-ins start sudo mode and a short session
