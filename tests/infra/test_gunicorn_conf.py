"""gunicorn.conf.py, read by gunicorn itself (``--print-config``), with and without the
environment overrides the web hosts' systemd unit sets."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_OVERRIDES = (
    "PINBOARD_GUNICORN_BIND",
    "PINBOARD_GUNICORN_WORKERS",
    "PINBOARD_GUNICORN_THREADS",
    "PINBOARD_GUNICORN_FORWARDED_ALLOW_IPS",
    "PINBOARD_GUNICORN_ACCESS_LOG",
)


def _config(tmp_path: Path, **overrides: str) -> dict[str, str]:
    """gunicorn's resolved settings, name -> printed value. --print-config also loads the
    application: a stand-in one, so that what is tested is the settings, not the site."""
    (tmp_path / "standin.py").write_text("def app(environ, start_response):\n    return []\n")
    env = {k: v for k, v in os.environ.items() if k not in _OVERRIDES} | overrides
    config_file = str(ROOT / "gunicorn.conf.py")
    result = subprocess.run(
        [sys.executable, "-m", "gunicorn", "-c", config_file, "--print-config", "standin:app"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    pairs = (re.match(r"^(\w+)\s+= (.*)$", line) for line in result.stdout.splitlines())
    return {m.group(1): m.group(2) for m in pairs if m}


def test_defaults(tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert config["bind"] == "['127.0.0.1:8000']"
    assert config["workers"] == str(2 * os.cpu_count() + 1)  # type: ignore[operator]
    assert config["threads"] == "4"
    assert config["worker_class"] == "gthread"
    assert config["forwarded_allow_ips"] == "['127.0.0.1']"
    assert config["accesslog"] == "-"
    # Workers are recycled, not all at once.
    assert int(config["max_requests"]) > 0 and int(config["max_requests_jitter"]) > 0
    assert int(config["graceful_timeout"]) <= int(config["timeout"])


def test_environment_overrides(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        PINBOARD_GUNICORN_BIND="10.0.1.5:9000",
        PINBOARD_GUNICORN_WORKERS="17",
        PINBOARD_GUNICORN_THREADS="8",
        PINBOARD_GUNICORN_FORWARDED_ALLOW_IPS="10.0.0.1",
        PINBOARD_GUNICORN_ACCESS_LOG="",
    )
    assert config["bind"] == "['10.0.1.5:9000']"
    assert config["workers"] == "17"
    assert config["threads"] == "8"
    assert config["forwarded_allow_ips"] == "['10.0.0.1']"
    assert config["accesslog"] == "None"


@pytest.mark.parametrize("name", ["PINBOARD_GUNICORN_WORKERS", "PINBOARD_GUNICORN_THREADS"])
@pytest.mark.parametrize("value", ["many", "0"])
def test_a_count_that_is_not_a_positive_number_is_refused(
    tmp_path: Path, name: str, value: str
) -> None:
    with pytest.raises(subprocess.CalledProcessError) as error:
        _config(tmp_path, **{name: value})
    assert f"{name} must be a positive whole number" in error.value.stderr
