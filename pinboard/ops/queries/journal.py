"""The journal page: every operation, planned (dry run) or run, newest first."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from ..models import JournalEntry

ENTRIES_PER_PAGE = 50


def entries() -> QuerySet[JournalEntry]:
    return JournalEntry.objects.all()


def entry(entry_id: int) -> JournalEntry:
    found = JournalEntry.objects.filter(pk=entry_id).first()
    if found is None:
        raise Http404(f"no journal entry {entry_id}")
    return found
