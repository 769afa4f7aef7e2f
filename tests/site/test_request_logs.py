"""Structured logs: each request's ID, in its response, its access line and every line logged
for it, the Celery tasks it queues (and theirs) included; JSON lines with their fields.

The lines are read from a handler on the root logger with the site's own filter and JSON
formatter (``pinboard/logs.py``), as the configured one is; a subprocess checks the
configuration itself, on standard error.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from celery.worker.request import Request
from django.test import Client

from pinboard import celery_app, request_id
from pinboard.data_plane import get_feeds
from pinboard.follows.actions import follow_user
from pinboard.logs import JsonFormatter, RequestIdFilter
from tests.site.api_client import Api
from toolkit.images import image_upload

ROOT = Path(__file__).resolve().parents[2]
HEX_ID = re.compile(r"[0-9a-f]{32}")
#: The queue the probe task goes through when it is sent through the broker.
PROBE_QUEUE = "request-id-probe"


class Lines(logging.Handler):
    """Every record the root logger hands it, as the JSON line the site would write."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.addFilter(RequestIdFilter())
        self.setFormatter(JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def entries(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines]  # each one valid JSON


@pytest.fixture
def logged() -> Iterator[Lines]:
    handler, root = Lines(), logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


@celery_app.task(name="tests.site.test_request_logs.probe")
def probe(depth: int) -> None:
    """Logs on a shardstore logger, then queues itself once more while ``depth`` lasts."""
    logging.getLogger("shardstore.probe").info("probe at depth %s", depth)
    if depth:
        probe.apply_async((depth - 1,), queue=PROBE_QUEUE)


# -- the ID of a request -----------------------------------------------------------


def test_a_request_without_an_id_gets_a_new_one_in_its_response(client: Client) -> None:
    first, second = client.get("/"), client.get("/api/v1/pins/12")
    assert HEX_ID.fullmatch(first["X-Request-ID"]) and HEX_ID.fullmatch(second["X-Request-ID"])
    assert first["X-Request-ID"] != second["X-Request-ID"]
    assert request_id.current() is None  # bound for the request only


@pytest.mark.parametrize("sent", ["edge-7f3a.b_c", "A" * 64, "0"])
def test_a_well_formed_client_id_comes_back(client: Client, sent: str) -> None:
    assert client.get("/", headers={"X-Request-ID": sent})["X-Request-ID"] == sent


@pytest.mark.parametrize(
    "sent",
    ["A" * 65, "has space", "semi;colon", 'quote"d', "caf\u00e9", "line\nbreak", "{json}"],
)
def test_a_bad_client_id_is_replaced(client: Client, logged: Lines, sent: str) -> None:
    response = client.get("/", headers={"X-Request-ID": sent})
    assert response.status_code == 200
    assert HEX_ID.fullmatch(response["X-Request-ID"])
    assert sent not in "\n".join(logged.lines)


def test_an_empty_client_id_is_replaced(client: Client) -> None:
    assert HEX_ID.fullmatch(client.get("/", headers={"X-Request-ID": ""})["X-Request-ID"])


# -- the access line and the JSON fields --------------------------------------------


def test_each_request_logs_one_access_line_in_json(
    client: Client, logged: Lines, cast: dict[str, Any]
) -> None:
    response = client.get(f"/api/v1/pins/{cast['pin']}?fields=secret-words", headers={"X-Request-ID": "trace-1"})  # fmt: skip
    missing = client.get("/no/such/page/?q=1")
    assert response.status_code == 200 and missing.status_code == 404
    [hit, miss] = [e for e in logged.entries() if e["logger"] == "pinboard.request"]
    assert hit["level"] == "INFO" and hit["request_id"] == "trace-1"
    assert (hit["method"], hit["route"], hit["path"], hit["status"]) == (
        "GET",
        "api-pin",
        f"/api/v1/pins/{cast['pin']}",
        200,
    )
    assert isinstance(hit["duration_ms"], float) and 0 <= hit["duration_ms"] < 60_000
    assert "secret-words" not in json.dumps(hit)  # no query string
    assert (miss["status"], miss["route"], miss["path"]) == (404, None, "/no/such/page/")
    assert miss["request_id"] == missing["X-Request-ID"]
    when = datetime.fromisoformat(hit["time"].replace("Z", "+00:00"))
    assert hit["time"].endswith("Z") and when.utcoffset().total_seconds() == 0
    assert abs(time.time() - when.timestamp()) < 60


def test_a_json_line_holds_the_exception_and_the_callers_fields(logged: Lines) -> None:
    log = logging.getLogger("shardstore.session")
    with request_id.bound("trace-2"):
        try:
            raise RuntimeError("shard 7 gone")
        except RuntimeError:
            log.exception("statement failed", extra={"shard": 7, "sql_ms": 812.5})
    log.warning("outside any request")
    [failed, outside] = logged.entries()
    assert failed["level"] == "ERROR" and failed["logger"] == "shardstore.session"
    assert failed["message"] == "statement failed" and failed["request_id"] == "trace-2"
    assert (failed["shard"], failed["sql_ms"]) == (7, 812.5)
    assert "RuntimeError: shard 7 gone" in failed["exception"]
    assert "request_id" not in outside and "exception" not in outside
    assert all("\n" not in line for line in logged.lines)


def test_json_settings_write_shardstore_records_to_standard_error_with_the_id() -> None:
    """The configuration itself, in a fresh interpreter: PINBOARD_LOG_FORMAT=json."""
    code = (
        "import django, logging; django.setup();"
        "from pinboard import request_id;"
        "token = request_id.bind('trace-3');"
        "logging.getLogger('shardstore.backends.mysql').warning('slow', extra={'ms': 9});"
        "print('standard output')"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "pinboard.settings.test"}
    env["PINBOARD_LOG_FORMAT"] = "json"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "standard output\n"
    [line] = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert line["logger"] == "shardstore.backends.mysql" and line["message"] == "slow"
    assert (line["request_id"], line["ms"], line["level"]) == ("trace-3", 9, "WARNING")
    env["PINBOARD_LOG_FORMAT"] = "xml"
    refused = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0 and "PINBOARD_LOG_FORMAT must be one of" in refused.stderr


@pytest.mark.parametrize(
    ("settings_module", "chosen", "expected"),
    [
        ("pinboard.settings.prod", None, "json JsonFormatter"),
        ("pinboard.settings.prod", "text", "text TextFormatter"),
        ("pinboard.settings.dev", None, "text TextFormatter"),
        ("pinboard.settings.dev", "JSON", "json JsonFormatter"),
    ],
)
def test_production_logs_json_unless_told_and_the_embedded_default_text(
    tmp_path: Path, settings_module: str, chosen: str | None, expected: str
) -> None:
    code = (
        "from django.conf import settings;"
        "print(settings.LOG_FORMAT, settings.LOGGING['formatters']['site']['()'].__name__)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINBOARD_", "DJANGO_"))}
    env |= {
        "DJANGO_SETTINGS_MODULE": settings_module,
        "PINBOARD_VAR_DIR": str(tmp_path),
        "PINBOARD_SECRET_KEY": secrets.token_urlsafe(48),
        **({"PINBOARD_LOG_FORMAT": chosen} if chosen else {}),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.stdout.strip() == expected, done.stderr


# -- into the tasks ------------------------------------------------------------------


def test_tasks_run_eagerly_in_a_request_log_with_its_id(
    client: Client, logged: Lines, make_user: Any
) -> None:
    """On the embedded default a task runs in the request that queued it: a new pin's
    fan-out, the batch it queues, its search indexing."""
    owner, fan = make_user("owner"), make_user("fan")
    follow_user(fan["id"], owner["id"])
    get_feeds().mark_seen(fan["id"])  # an active pinner: a fan-out batch for them
    api = Api.as_pinner(client, owner)
    board = api.new_board("Logged board")
    logged.lines.clear()
    response = client.post(
        "/api/v1/pins",
        {"board_id": board["id"], "image": image_upload(), "description": "logged"},
        headers={**api.headers(), "X-Request-ID": "trace-4"},
    )
    assert response.status_code == 201, response.content
    done = [e for e in logged.entries() if e["logger"] == "celery.app.trace"]
    names = {name for e in done for name in re.findall(r"Task ([\w.]+)\[", e["message"])}
    assert {
        "pinboard.feeds.tasks.fan_out_pin",
        "pinboard.feeds.tasks.fan_out_batch",
        "pinboard.search.tasks.index_pin",
    } <= names
    assert {e.get("request_id") for e in done} == {"trace-4"}
    assert request_id.current() is None


@pytest.fixture
def through_the_broker() -> Iterator[None]:
    """Tasks go through the broker (the run's in-memory one) instead of running eagerly."""
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = eager


def run_as_a_worker(queue: str) -> dict[str, Any]:
    """Take the next message of ``queue`` and run it as a worker does (celery's ``Request``:
    its headers, the prerun and postrun signals), in a thread of its own, so the task
    inherits no context from here. The message's headers."""
    seen: dict[str, Any] = {}

    def work() -> None:
        with celery_app.connection_for_read() as connection:
            message = connection.default_channel.basic_get(queue)
            assert message is not None, f"nothing on {queue}"
            seen["headers"] = dict(message.headers)
            Request(message, app=celery_app).execute()
            seen["after"] = request_id.current()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(30)
    assert "after" in seen, "the task did not run"
    assert seen["after"] is None  # unbound once the task returned
    return dict(seen["headers"])


def test_the_id_travels_in_the_message_to_the_task_and_to_what_it_queues(
    logged: Lines, through_the_broker: None
) -> None:
    with request_id.bound("trace-5"):
        probe.apply_async((1,), queue=PROBE_QUEUE)
    first = run_as_a_worker(PROBE_QUEUE)
    second = run_as_a_worker(PROBE_QUEUE)  # queued by the first, in the worker's thread
    assert first[request_id.TASK_HEADER] == second[request_id.TASK_HEADER] == "trace-5"
    probes = [e for e in logged.entries() if e["logger"] == "shardstore.probe"]
    assert [(e["message"], e.get("request_id")) for e in probes] == [
        ("probe at depth 1", "trace-5"),
        ("probe at depth 0", "trace-5"),
    ]


def test_a_task_queued_outside_a_request_carries_no_id(
    logged: Lines, through_the_broker: None
) -> None:
    probe.apply_async((0,), queue=PROBE_QUEUE)
    assert request_id.TASK_HEADER not in run_as_a_worker(PROBE_QUEUE)
    [line] = [e for e in logged.entries() if e["logger"] == "shardstore.probe"]
    assert "request_id" not in line


def test_a_worker_process_logs_json_lines_with_the_requests_id(
    worker: Path, client: Client, make_user: Any
) -> None:
    """A real worker on a real broker (the ``servers`` plane): the fan-out queued by the
    request and the batch the fan-out queues log with the request's ID."""
    owner, fan = make_user("owner"), make_user("fan")
    follow_user(fan["id"], owner["id"])
    get_feeds().mark_seen(fan["id"])
    api = Api.as_pinner(client, owner)
    board = api.new_board("Board of a worker")
    response = client.post(
        "/api/v1/pins",
        {"board_id": board["id"], "image": image_upload(), "description": "by a worker"},
        headers={**api.headers(), "X-Request-ID": "trace-6"},
    )
    assert response.status_code == 201, response.content
    wanted = {"pinboard.feeds.tasks.fan_out_pin", "pinboard.feeds.tasks.fan_out_batch"}
    deadline = time.monotonic() + 60
    while True:
        lines = [json.loads(line) for line in worker.read_text().splitlines() if line.startswith("{")]  # fmt: skip
        done = {
            name
            for e in lines
            if e.get("request_id") == "trace-6" and "succeeded" in e["message"]
            for name in re.findall(r"Task ([\w.]+)\[", e["message"])
        }
        if wanted <= done:
            break
        assert time.monotonic() < deadline, worker.read_text()[-3000:]
        time.sleep(0.2)
