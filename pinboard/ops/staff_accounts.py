"""Staff accounts in the admin under the console's sudo mode: a change to an account or a
group (a password set, staff or superuser made, a role given) asks for the operator's own
password again in the same window as the console's destructive actions, and each change
is journaled with who made it.

A stolen staff session could otherwise set its own password in the admin (Django's form
asks for no current one), or make a superuser, and then pass the console's prompt; or guess
at the admin's own password form, whose old-password field no rate limit counts.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin import ModelAdmin
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from ..errors import RateLimited
from ..views_common import next_url
from . import reauth
from .access import staff_required
from .models import JournalEntry

#: The admin's URL names of what staff accounts are made of (``auth_user_change``, ...),
#: and of its form for the signed-in account's own password.
GUARDED_APP = "auth_"
OWN_PASSWORD = "password_change"
ACTIONS = {ADDITION: "added", CHANGE: "changed", DELETION: "deleted"}


def needs_confirmation(request: HttpRequest) -> bool:
    """Whether this admin request changes a staff account or group without sudo mode."""
    match = request.resolver_match
    name = (match.url_name if match is not None else None) or ""
    return (
        request.method == "POST"
        and (name.startswith(GUARDED_APP) or name == OWN_PASSWORD)
        and not reauth.confirmed_recently(request)
    )


def ask_password(request: HttpRequest) -> HttpResponse:
    """A 403 that asks for the password again; once given, back to the admin's form."""
    context = {"next": request.get_full_path()}
    return render(request, "ops/confirm.html", context, status=403)


@staff_required
@require_http_methods(["GET", "HEAD", "POST"])
def confirm(request: HttpRequest) -> HttpResponse:
    """The password again (``reauth.confirm``): sudo mode, then ``next`` (a page here)."""
    back = next_url(request, "/ops/")
    if request.method != "POST":
        return render(request, "ops/confirm.html", {"next": back})
    try:
        confirmed = reauth.confirm(request, request.POST.get("password"))
    except RateLimited as refused:
        messages.error(request, refused.message)
        return render(request, "ops/confirm.html", {"next": back}, status=429)
    if not confirmed:
        messages.error(request, "That is not your password.")
        return render(request, "ops/confirm.html", {"next": back}, status=403)
    messages.success(request, "Confirmed: submit the change again.")
    return redirect(back)


@receiver(post_save, sender=LogEntry)
def _journal_staff_change(sender: Any, instance: LogEntry, created: bool, **kwargs: Any) -> None:
    """The admin's record of a change to an account or a group, in the journal too."""
    if not created or instance.content_type is None or instance.content_type.app_label != "auth":
        return
    what = f"{instance.content_type.model} {instance.object_repr}"
    summary = f"{what} {ACTIONS.get(instance.action_flag, 'changed')} in the admin"
    message = instance.get_change_message()
    JournalEntry.objects.create(
        operation="staff-account",
        summary=summary,
        operator=instance.user.get_username(),
        params={"object_id": instance.object_id or ""},
        ok=True,
        result=message or summary,
        seconds=0.0,
    )


def record_own_password_change(request: HttpRequest) -> None:
    """The admin's own password form records nothing: recorded (and so journaled) as the
    admin records a password it sets for an account."""
    _record(request, request.user, CHANGE, "Changed their own password.")


class RecordsEachDeletion(ModelAdmin):  # type: ignore[type-arg]  # not generic at run time
    """Accounts or groups deleted together recorded one at a time: Django records them in
    one bulk write, which sends no ``post_save``, so the journal would miss them."""

    def log_deletions(self, request: HttpRequest, queryset: Any) -> list[LogEntry]:
        return [_record(request, obj, DELETION) for obj in queryset]


def _record(request: HttpRequest, obj: Any, action: int, message: str = "") -> LogEntry:
    """One record of the admin's (``_journal_staff_change`` journals it as it is saved)."""
    user_id = request.user.pk
    assert user_id is not None  # only staff reach the admin's views
    return LogEntry.objects.log_actions(
        user_id=user_id,
        queryset=[obj],
        action_flag=action,
        change_message=message,
        single_object=True,
    )
