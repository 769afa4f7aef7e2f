from django.apps import AppConfig


class OpsConfig(AppConfig):
    """The operators' side: the console at /ops/, the journal, shard-store commands."""

    name = "pinboard.ops"
    verbose_name = "operations"

    def ready(self) -> None:
        from . import (
            backup_actions,  # noqa: F401 - registers the console's backup actions
            durability_action,  # noqa: F401 - registers the console's durability action
            guard_action,  # noqa: F401 - registers the console's guard pause action
            reauth,  # noqa: F401 - staff log-ins start sudo mode and a short session
            reopen_action,  # noqa: F401 - registers the console's reopen action
            staff_accounts,  # noqa: F401 - journals the admin's changes to staff accounts
        )
