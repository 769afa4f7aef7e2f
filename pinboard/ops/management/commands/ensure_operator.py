"""``python manage.py ensure_operator``: the first staff account, made once, on a fresh install.

``make run`` calls it after ``migrate``: when the control database has no
staff account at all, it creates the superuser ``operator`` with a random
password and prints the password, once (only its hash is kept). Otherwise it
does nothing and says nothing. More operators: ``manage.py createsuperuser``,
or the admin at /admin/.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

USERNAME = "operator"


class Command(BaseCommand):
    help = (
        "Create the staff account 'operator' with a random password if there is no staff account."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model()
        if users.objects.filter(is_staff=True).exists():
            return
        if users.objects.filter(username=USERNAME).exists():
            raise CommandError(
                f"no staff account, but a user {USERNAME!r} exists: make it staff with the"
                " admin or `manage.py createsuperuser` another"
            )
        password = secrets.token_urlsafe(18)
        users.objects.create_superuser(USERNAME, email="", password=password)
        self.stdout.write(
            "The operators' console is at /ops/ (staff log-in at /admin/login/).\n"
            f"  username: {USERNAME}\n"
            f"  password: {password}\n"
            "This password is shown once, now: keep it (change it at /admin/password_change/)."
        )
