"""Long jobs on the site: chunks in the control database, one task each (run eagerly here; a
real worker and a worker killed mid-job are in test_job_worker.py), the console's Jobs
pages and ``manage.py shardstore job``.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from pinboard.data_plane import cached_store, get_graph
from pinboard.follows.actions import follow_user
from pinboard.ops import jobs
from pinboard.ops.chunks import claim, finish
from pinboard.ops.models import Job, JobChunk
from pinboard.ops.tasks import run_job_chunk
from shardstore import shard_of
from shardstore.jobs import JobError
from shardstore.mappings import _insert
from social.graph import following_key
from tests.site import job_kinds  # noqa: F401 - registers the kind "test-chunks"
from tests.site.job_kinds import runs
from tests.site.ops import config_dir_fixture, operator_fixture, staff_fixture, text  # noqa: F401
from tests.site.page_helpers import log_in


def shard_count() -> int:
    return cached_store().topology.shard_count


def started(directory: Path) -> list[int]:
    return sorted(shard for event, shard, _ in runs(directory) if event == "start")


def finished(directory: Path) -> list[int]:
    return sorted(shard for event, shard, _ in runs(directory) if event == "done")


def job_command(*args: str, tty: bool = False) -> str:
    out = Terminal() if tty else io.StringIO()
    call_command("shardstore", "job", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_job_runs_every_chunk_once_and_counts_done_up_to_total(tmp_path: Path) -> None:
    job = jobs.start("test-chunks", {"dir": str(tmp_path)}, created_by="ops_ada")
    shards = list(range(shard_count()))
    assert (job.state, job.done, job.total, job.failed) == (Job.DONE, len(shards), len(shards), 0)
    assert job.finished_at is not None and job.percent == 100
    assert started(tmp_path) == finished(tmp_path) == shards
    chunks = list(job.chunks.all())
    assert [(c.first_shard, c.last_shard) for c in chunks] == [(s, s) for s in shards]
    assert {(c.state, c.attempts) for c in chunks} == {(JobChunk.DONE, 1)}
    assert jobs.totals(job) == {"shards": len(shards)}


def test_a_chunk_done_is_not_run_again_when_queued_again(tmp_path: Path) -> None:
    job = jobs.start("test-chunks", {"dir": str(tmp_path), "per_chunk": 4}, created_by="t")
    assert job.total == shard_count() // 4
    before = runs(tmp_path)
    chunk_ids = list(job.chunks.values_list("pk", flat=True))
    jobs.enqueue(chunk_ids)  # every chunk delivered again
    assert run_job_chunk.delay(chunk_ids[0]).get().startswith("skipped")
    assert jobs.resume(job.pk) == 0  # nothing left to do
    assert runs(tmp_path) == before
    job.refresh_from_db()
    assert (job.done, job.total) == (job.total, shard_count() // 4)
    assert set(job.chunks.values_list("attempts", flat=True)) == {1}


def test_a_chunk_left_running_by_a_dead_worker_runs_again_and_counts_once(tmp_path: Path) -> None:
    job = jobs.start("test-chunks", {"dir": str(tmp_path), "shards": [0, 1]}, created_by="t")
    chunk = job.chunks.get(index=1)
    # As if a worker had claimed it again and died: running, one more attempt, not done.
    JobChunk.objects.filter(pk=chunk.pk).update(state=JobChunk.PENDING)
    Job.objects.filter(pk=job.pk).update(done=1, state=Job.RUNNING, finished_at=None)
    assert claim(chunk.pk) is not None
    assert run_job_chunk.delay(chunk.pk).get().startswith("done")
    finish(chunk, {"shards": 1})  # a late duplicate of the same run: counted once
    job.refresh_from_db()
    chunk.refresh_from_db()
    assert (job.state, job.done, job.failed) == (Job.DONE, 2, 0)
    assert (chunk.state, chunk.attempts) == (JobChunk.DONE, 3)
    assert finished(tmp_path) == [0, 1, 1]  # the rerun was harmless: the kind's to make it so


def test_failed_chunks_keep_their_error_and_resume_runs_only_them(tmp_path: Path) -> None:
    (tmp_path / "fail").touch()
    job = jobs.start("test-chunks", {"dir": str(tmp_path), "fail": [3, 7]}, created_by="t")
    total = shard_count()
    assert (job.state, job.done, job.failed) == (Job.FAILED, total - 2, 2)
    failed = list(job.chunks.filter(state=JobChunk.FAILED))
    assert [c.first_shard for c in failed] == [3, 7]
    assert failed[0].error_line == "RuntimeError: shard 3 refused"
    assert "Traceback" in failed[0].error and "job_kinds.py" in failed[0].error

    (tmp_path / "fail").unlink()
    assert jobs.resume(job.pk) == 2
    job.refresh_from_db()
    assert (job.state, job.done, job.failed) == (Job.DONE, total, 0)
    assert started(tmp_path).count(3) == 2 and started(tmp_path).count(4) == 1
    assert finished(tmp_path) == list(range(total))
    assert sorted(job.chunks.filter(attempts=2).values_list("first_shard", flat=True)) == [3, 7]


def test_bad_parameters_are_refused_and_make_no_job(tmp_path: Path) -> None:
    for kind, params in [
        ("nope", {}),
        ("reconcile", {"force": True}),
        ("reconcile", {"shards": [0, 10**6]}),
        ("reconcile", {"per_chunk": 0}),
    ]:
        with pytest.raises(JobError):
            jobs.start(kind, params, created_by="t")
    assert not Job.objects.exists()


def test_a_reconcile_job_repairs_a_half_written_like_through_the_cache(
    cast: dict[str, Any],
) -> None:
    bob, pin = cast["bob"], cast["pin"]
    store = cached_store()
    liked_by = store.mapping("pin_liked_by_users")
    assert liked_by.page(pin).ids == []  # cached: no likes yet
    with store.store.session(shard_of(bob["id"]), write=True) as session:
        _insert(session, "user_likes_pins", bob["id"], pin, 1)  # the inverse never written

    check = jobs.start("reconcile", {"check": True}, created_by="t")
    assert jobs.totals(check)["missing_inverse"] == 1 and liked_by.page(pin).ids == []
    job = jobs.start("reconcile", {}, created_by="t")
    assert job.state == Job.DONE and jobs.totals(job)["missing_inverse"] == 1
    assert liked_by.page(pin).ids == [bob["id"]]  # repaired, and the cached list refreshed
    assert jobs.totals(jobs.start("reconcile", {}, created_by="t"))["missing_inverse"] == 0


def test_a_graph_rebuild_job_restores_a_lost_key_from_mysql(make_user: Any) -> None:
    ann, bob = make_user("ann"), make_user("bob")
    follow_user(ann["id"], bob["id"])
    graph = get_graph()
    graph.shards.client_for(ann["id"]).delete(following_key(ann["id"]))
    assert not graph.follows_user(ann["id"], bob["id"])
    shard = shard_of(ann["id"])
    job = jobs.start("graph-rebuild", {"shards": [shard, shard]}, created_by="t")
    assert (job.total, job.state) == (1, Job.DONE)
    assert jobs.totals(job)["keys_repaired"] >= 1
    assert graph.follows_user(ann["id"], bob["id"])


# -- the console -------------------------------------------------------------------------


def test_the_jobs_page_lists_jobs_with_their_progress_and_a_start_form(
    staff: Client, tmp_path: Path
) -> None:
    (tmp_path / "fail").touch()
    job = jobs.start("test-chunks", {"dir": str(tmp_path), "fail": [2]}, created_by="ops_ada")
    page = text(staff.get("/ops/jobs/"))
    total = shard_count()
    assert f'<progress value="{total - 1}" max="{total}"' in page
    assert f'href="/ops/jobs/{job.pk}/"' in page and "finished with failed chunks" in page
    assert 'aria-current="page">Jobs</a>' in page  # in the console's navigation
    assert '<option value="reconcile">' in page and '<option value="graph-rebuild">' in page
    assert 'name="csrfmiddlewaretoken"' in page


def test_a_jobs_page_shows_its_failed_chunks_and_resumes_them(
    staff: Client, tmp_path: Path
) -> None:
    (tmp_path / "fail").touch()
    job = jobs.start("test-chunks", {"dir": str(tmp_path), "fail": [5]}, created_by="ops_ada")
    page = text(staff.get(f"/ops/jobs/{job.pk}/"))
    assert "RuntimeError: shard 5 refused" in page and "Traceback" in page
    assert f'action="/ops/jobs/{job.pk}/resume/"' in page
    (tmp_path / "fail").unlink()
    response = staff.post(f"/ops/jobs/{job.pk}/resume/")
    assert response.status_code == 302 and response["Location"] == f"/ops/jobs/{job.pk}/"
    job.refresh_from_db()
    assert job.state == Job.DONE
    page = text(staff.get(f"/ops/jobs/{job.pk}/"))
    assert "resume/" not in page and f"{shard_count()}/{shard_count()}</strong>" in page
    assert staff.get(f"/ops/jobs/{job.pk}/resume/").status_code == 405  # POST only
    for bad in ("0", "01", "x", "9" * 19, "999999"):
        assert staff.get(f"/ops/jobs/{bad}/").status_code == 404, bad
        assert staff.post(f"/ops/jobs/{bad}/resume/").status_code == 404, bad


def test_staff_start_a_job_from_the_console(staff: Client) -> None:
    form = {"kind": "reconcile", "first": "2", "last": "5", "per_chunk": "2", "check": "on"}
    response = staff.post("/ops/jobs/", form)
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/ops/jobs/{job.pk}/"
    assert (job.kind, job.total, job.created_by) == ("reconcile", 2, "ops_ada")
    assert job.params == {"shards": [2, 5], "per_chunk": 2, "check": True}
    assert f"Job {job.pk} started" in text(staff.get(response["Location"]))
    for bad in [{"kind": "nope"}, {"kind": "reconcile", "first": "2"},
                {"kind": "reconcile", "first": "0", "last": "99999"},
                {"kind": "reconcile", "per_chunk": "65"}]:  # fmt: skip
        assert staff.post("/ops/jobs/", bad).status_code == 400, bad
    assert Job.objects.count() == 1


def test_the_jobs_pages_need_staff_and_posts_need_the_csrf_token(
    client: Client, operator: Any, make_user: Any, config_dir: Path, tmp_path: Path
) -> None:
    job = jobs.start("test-chunks", {"dir": str(tmp_path)}, created_by="t")
    urls = ["/ops/jobs/", f"/ops/jobs/{job.pk}/"]
    for url in urls:
        assert client.get(url)["Location"].startswith("/admin/login/?next="), url
    assert client.post("/ops/jobs/", {"kind": "reconcile"}).status_code == 302
    assert client.post(f"/ops/jobs/{job.pk}/resume/").status_code == 302
    log_in(client, make_user("pinner"))
    for url in urls:
        assert client.get(url).status_code == 403, url
    assert client.post("/ops/jobs/", {"kind": "reconcile"}).status_code == 403
    assert client.post(f"/ops/jobs/{job.pk}/resume/").status_code == 403

    guarded = Client(enforce_csrf_checks=True)
    guarded.force_login(operator)
    assert guarded.post("/ops/jobs/", {"kind": "reconcile"}).status_code == 403
    assert guarded.post(f"/ops/jobs/{job.pk}/resume/").status_code == 403
    page = text(guarded.get("/ops/jobs/"))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    posted = guarded.post("/ops/jobs/", {"kind": "reconcile", "csrfmiddlewaretoken": token[1]})
    assert posted.status_code == 302
    assert Job.objects.count() == 2  # the first, and the one posted with the token


# -- manage.py shardstore job --------------------------------------------------------------


def test_the_command_starts_and_follows_a_job_lists_and_resumes(tmp_path: Path) -> None:
    total = shard_count()
    out = job_command("start", "test-chunks", "--param", f"dir={tmp_path}", "--wait")
    job = Job.objects.get()
    assert out.splitlines() == [
        f"job {job.pk} started: test-chunks, {total} chunks",
        f"job {job.pk} test-chunks: {total}/{total} chunks done (done)",
        f"job {job.pk}: shards {total}",
    ]
    bar = job_command("status", str(job.pk), tty=True)
    assert bar == f"\rjob {job.pk} test-chunks [{'#' * 30}] {total}/{total} 100% (done)\x1b[K\n" + f"job {job.pk}: shards {total}\n"  # fmt: skip
    assert f"{job.pk}  test-chunks" in job_command("list")
    assert job_command("resume", str(job.pk)).startswith(f"job {job.pk}: 0 chunks queued again")
    assert "reconcile: Repair mapping pairs" in job_command("kinds")
    assert "--param check=" in job_command("kinds")


def test_the_command_exits_1_on_failed_chunks_and_unknown_jobs(tmp_path: Path) -> None:
    (tmp_path / "fail").touch()
    out = io.StringIO()
    with pytest.raises(CommandError, match="status 1"):
        call_command(
            "shardstore", "job", "start", "test-chunks", "--param", f"dir={tmp_path}",
            "--param", "fail=[2]", "--shards", "0-3", "--per-chunk", "2", stdout=out,
        )  # fmt: skip
    job = Job.objects.get()
    assert f"job {job.pk} test-chunks: 1/2 chunks done, 1 failed (failed)" in out.getvalue()
    assert "chunk 1 (shards 2-3): RuntimeError: shard 2 refused" in out.getvalue()
    assert f"`job resume {job.pk}` runs them again" in out.getvalue()
    (tmp_path / "fail").unlink()
    assert "2/2 chunks done (done)" in job_command("resume", str(job.pk), "--wait")
    for args in (["status", "999999"], ["resume", "999999"], ["start", "nope"],
                 ["start", "reconcile", "--shards", "3-1"]):  # fmt: skip
        out = io.StringIO()
        with pytest.raises(CommandError):
            call_command("shardstore", "job", *args, stdout=out)
        assert out.getvalue().startswith("job: "), args
