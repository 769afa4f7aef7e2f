"""The console's roles (pinboard/ops/roles.py): the journal's permissions, and a group each."""

from typing import Any

from django.db import migrations

ROLES = {  # as roles.ROLES when this was written
    "viewer": ["view_journalentry"],
    "operator": ["view_journalentry", "run_actions"],
    "destructive": ["view_journalentry", "run_destructive_actions"],
}


def make_roles(apps: Any, schema_editor: Any) -> None:
    from django.contrib.auth.management import create_permissions

    ops = apps.get_app_config("ops")
    ops.models_module = True  # permissions are made after migrations otherwise
    create_permissions(ops, verbosity=0, apps=apps)
    ops.models_module = None
    group_model, permission_model = (
        apps.get_model("auth", "Group"),
        apps.get_model("auth", "Permission"),
    )
    for name, codenames in ROLES.items():
        group, _ = group_model.objects.get_or_create(name=name)
        group.permissions.set(
            permission_model.objects.filter(content_type__app_label="ops", codename__in=codenames)
        )


def drop_roles(apps: Any, schema_editor: Any) -> None:
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("ops", "0004_journal_locks"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="journalentry",
            options={
                "ordering": ["-started_at", "-id"],
                "permissions": [
                    ("run_actions", "Can run the console's actions and jobs"),
                    (
                        "run_destructive_actions",
                        "Can fail over, split, revert, clean up, close ranges",
                    ),
                ],
                "verbose_name_plural": "journal entries",
            },
        ),
        migrations.RunPython(make_roles, drop_roles),
    ]
