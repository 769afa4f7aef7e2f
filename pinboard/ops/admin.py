"""The journal in the admin, read-only: it is written by operations, never by hand; and the
staff accounts and roles, each deletion of which is journaled (``staff_accounts.py``)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.http import HttpRequest

from .models import JournalEntry
from .staff_accounts import RecordsEachDeletion


class StaffAccountAdmin(RecordsEachDeletion, UserAdmin):  # type: ignore[type-arg]
    pass


class RoleAdmin(RecordsEachDeletion, GroupAdmin):
    pass


for model, model_admin in ((User, StaffAccountAdmin), (Group, RoleAdmin)):
    admin.site.unregister(model)  # Django's own, registered as its module was imported
    admin.site.register(model, model_admin)


@admin.register(JournalEntry)
class JournalEntryAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # not generic at run time
    list_display = ("started_at", "operator", "operation", "summary", "dry_run", "ok", "seconds")
    list_filter = ("operation", "dry_run", "ok")
    search_fields = ("summary", "operator", "result")
    date_hierarchy = "started_at"

    # Every operator may read the journal (the console shows it to all staff alike).
    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return bool(request.user.is_active and request.user.is_staff)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
