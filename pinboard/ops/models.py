"""The journal: every operation that changes where data lives, planned or run."""

from __future__ import annotations

from django.db import models


class JournalEntry(models.Model):
    """One operation: who asked, its plan, each step's result, how it ended and how long it took.

    A dry run is journaled too (``dry_run``), so the plan an operator confirmed
    can be compared with what ran.
    """

    operation = models.CharField(max_length=64)  # "open-range", "failover", ...
    summary = models.TextField()
    plan = models.JSONField(default=list)  # the plan's numbered lines
    params = models.JSONField(default=dict)
    operator = models.CharField(max_length=150)
    dry_run = models.BooleanField(default=False)
    started_at = models.DateTimeField(auto_now_add=True, db_index=True)
    steps = models.JSONField(default=list)  # [index, step, note] of each step done
    ok = models.BooleanField(null=True)  # None while running
    result = models.TextField(blank=True)
    seconds = models.FloatField(null=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        verbose_name_plural = "journal entries"

    def __str__(self) -> str:
        state = (
            "dry run" if self.dry_run else {None: "running", True: "done", False: "failed"}[self.ok]
        )
        return f"{self.started_at:%Y-%m-%d %H:%M:%S} {self.operator}: {self.summary} ({state})"
