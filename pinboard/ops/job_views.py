"""The console's long jobs (staff only): every job with its progress, one job's failed chunks
and errors, and forms to start a job of a kind and to resume one (pinboard/ops/jobs.py)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from shardstore import ShardStoreError
from shardstore.ids import MAX_SHARD_ID
from shardstore.jobs import MAX_SHARDS_PER_CHUNK

from . import job_kinds, jobs
from .access import no_role, staff_required
from .models import Job, JobChunk
from .paging import page_of
from .roles import job_role, may_run_job

JOBS_PER_PAGE = 20
CHUNKS_PER_PAGE = 50
MAX_JOB_DIGITS = 18  # job ids fit a signed 64-bit integer


class StartJobForm(forms.Form):
    kind = forms.ChoiceField(choices=())
    first = forms.IntegerField(
        min_value=0, max_value=MAX_SHARD_ID, required=False, label="First shard",
        help_text="leave both empty for every shard",
    )  # fmt: skip
    last = forms.IntegerField(min_value=0, max_value=MAX_SHARD_ID, required=False, label="Last shard")  # fmt: skip
    per_chunk = forms.IntegerField(
        min_value=1, max_value=MAX_SHARDS_PER_CHUNK, required=False, label="Shards per chunk",
        help_text="default 1: a chunk is one task, retried and counted on its own",
    )  # fmt: skip
    check = forms.BooleanField(
        required=False, label="Check only", help_text="report what it would repair, change nothing"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(k.name, f"{k.name}: {k.title}") for k in job_kinds.kinds().values()]
        self.fields["kind"].choices = choices  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        first, last = data.get("first"), data.get("last")
        if (first is None) != (last is None):
            raise forms.ValidationError("give both the first and the last shard, or neither")
        return data

    def params(self) -> dict[str, Any]:
        data, params = self.cleaned_data, dict[str, Any]()
        if data["first"] is not None:
            params["shards"] = [data["first"], data["last"]]
        if data["per_chunk"] is not None:
            params["per_chunk"] = data["per_chunk"]
        if data["check"]:
            params["check"] = True
        return params


@staff_required
@require_http_methods(["GET", "HEAD", "POST"])
def job_list(request: HttpRequest) -> HttpResponse:
    form = StartJobForm(request.POST or None)
    status = 200
    if request.method == "POST" and not may_run_job(request.user, request.POST.get("kind", "")):
        return no_role(request, job_role(request.POST.get("kind", "")))
    if request.method == "POST":
        if form.is_valid():
            try:
                job = jobs.start(
                    form.cleaned_data["kind"], form.params(), created_by=request.user.get_username()
                )
            except ShardStoreError as error:  # bad parameters for the kind, a shard map error
                form.add_error(None, str(error))
            else:
                messages.success(request, f"Job {job.pk} started: {job.total} chunks queued.")
                return redirect("ops_job", job_id=job.pk)
        status = 400
    page = page_of(request, Job.objects.all(), JOBS_PER_PAGE)
    return render(request, "ops/jobs.html", {"page": page, "form": form}, status=status)


def _job(job_id: str) -> Job:
    canonical = job_id.isascii() and job_id.isdigit() and job_id[0] != "0"
    if not canonical or len(job_id) > MAX_JOB_DIGITS:
        raise Http404("no such job")
    return get_object_or_404(Job, pk=int(job_id))


@staff_required
@require_safe
def job_detail(request: HttpRequest, job_id: str) -> HttpResponse:
    job = _job(job_id)
    by_state = dict(
        job.chunks.order_by().values("state").annotate(n=Count("id")).values_list("state", "n")
    )
    failed = job.chunks.filter(state=JobChunk.FAILED)
    context = {
        "job": job,
        "by_state": [(state, by_state.get(state, 0)) for state, _ in JobChunk.STATES],
        "totals": sorted(jobs.totals(job).items()),
        "page": page_of(request, failed, CHUNKS_PER_PAGE),
        "running": job.chunks.filter(state=JobChunk.RUNNING)[:CHUNKS_PER_PAGE],
        "resumable": job.done < job.total,
    }
    return render(request, "ops/job.html", context)


@staff_required
@require_POST
def job_resume(request: HttpRequest, job_id: str) -> HttpResponse:
    job = _job(job_id)
    if not may_run_job(request.user, job.kind):
        return no_role(request, job_role(job.kind))
    try:
        queued = jobs.resume(job.pk)
    except ShardStoreError as error:  # the broker is down
        messages.error(request, str(error))
    else:
        messages.success(request, f"Job {job.pk}: {queued} chunks queued again.")
    return redirect("ops_job", job_id=job.pk)
