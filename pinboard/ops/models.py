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
    locks = models.JSONField(default=list)  # the hosts (and the config) it held
    operator = models.CharField(max_length=150)
    dry_run = models.BooleanField(default=False)
    started_at = models.DateTimeField(auto_now_add=True, db_index=True)
    steps = models.JSONField(default=list)  # [index, step, note] of each step done
    ok = models.BooleanField(null=True)  # None while running, or left open by a dead run
    result = models.TextField(blank=True)
    seconds = models.FloatField(null=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        verbose_name_plural = "journal entries"
        # The console's roles (roles.py) are groups holding these.
        permissions = [
            ("run_actions", "Can run the console's actions and jobs"),
            ("run_destructive_actions", "Can fail over, split, revert, clean up, close ranges"),
        ]

    def __str__(self) -> str:
        state = (
            "dry run" if self.dry_run else {None: "running", True: "done", False: "failed"}[self.ok]
        )
        return f"{self.started_at:%Y-%m-%d %H:%M:%S} {self.operator}: {self.summary} ({state})"


class Job(models.Model):
    """A long job (shardstore/jobs.py): its kind and parameters, and how far its chunks got.

    ``done`` and ``failed`` count chunks; they change in the same transaction as the
    chunk they count (pinboard/ops/jobs.py), so they never disagree with the chunks.
    """

    RUNNING, DONE, FAILED = "running", "done", "failed"
    STATES = [(RUNNING, "running"), (DONE, "done"), (FAILED, "finished with failed chunks")]

    kind = models.CharField(max_length=64)
    params = models.JSONField(default=dict)
    state = models.CharField(max_length=16, choices=STATES, default=RUNNING)
    total = models.PositiveIntegerField(default=0)  # chunks
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"job {self.pk} {self.kind}: {self.done}/{self.total} ({self.state})"

    @property
    def percent(self) -> int:
        return 100 * self.done // self.total if self.total else 100


class JobChunk(models.Model):
    """One chunk of a job: shards ``first_shard`` to ``last_shard``, run by one Celery task.

    ``attempts`` counts the runs that began (a worker that died mid-chunk leaves one
    more); ``result`` is the summary of the run that finished it.
    """

    PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"
    STATES = [(s, s) for s in (PENDING, RUNNING, DONE, FAILED)]

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    first_shard = models.PositiveIntegerField()
    last_shard = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=STATES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    result = models.JSONField(default=dict)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField(null=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [models.UniqueConstraint(fields=["job", "index"], name="job_chunk_index")]
        indexes = [models.Index(fields=["job", "state"], name="job_chunk_state")]

    def __str__(self) -> str:
        return f"job {self.job_id} chunk {self.index} ({self.state})"

    @property
    def shards(self) -> str:
        if self.first_shard == self.last_shard:
            return str(self.first_shard)
        return f"{self.first_shard}-{self.last_shard}"

    @property
    def error_line(self) -> str:
        """The error's first line (its type and message; the traceback follows)."""
        return self.error.split("\n", 1)[0]


class SignedTaskUse(models.Model):
    """A signed console task that a worker took (``signed_tasks.py``): its nonce is claimed
    once, so the same message sent again runs nothing. Hex, so that a control database that
    compares text ignoring case cannot mistake one nonce for another."""

    nonce = models.CharField(max_length=64, primary_key=True)
    used_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"signed task {self.nonce} used at {self.used_at:%Y-%m-%d %H:%M:%S}"
