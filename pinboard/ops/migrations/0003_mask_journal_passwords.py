"""The journal keeps no password: entries written before it was masked on the way in
(an address given to an operation, or named in its error) are masked now."""

from __future__ import annotations

from typing import Any

from django.db import migrations

from shardstore.control.documents import masked

FIELDS = ("summary", "plan", "params", "steps", "result")


def mask_entries(apps: Any, schema_editor: Any) -> None:
    entries = apps.get_model("ops", "JournalEntry").objects.using(schema_editor.connection.alias)
    for entry in entries.iterator():
        before = [getattr(entry, name) for name in FIELDS]
        after = [masked(value) for value in before]
        if after != before:
            for name, value in zip(FIELDS, after, strict=True):
                setattr(entry, name, value)
            entry.save(update_fields=list(FIELDS))


class Migration(migrations.Migration):
    dependencies = [("ops", "0002_jobs")]

    operations = [migrations.RunPython(mask_entries, migrations.RunPython.noop)]
