"""The secret key: made once per install in the embedded default, refused in production
unless strong and unpublished; production settings pass Django's deploy checks."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from pinboard.settings.secret import MIN_LENGTH, key_file, new_key

REPO = Path(__file__).resolve().parents[2]


def run_manage(tmp_path: Path, settings: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``manage.py check --deploy`` in a fresh process, with only the PINBOARD_* given."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("PINBOARD_")}
    environment = {
        **inherited,
        "DJANGO_SETTINGS_MODULE": settings,
        "PINBOARD_VAR_DIR": str(tmp_path / "var"),
        **env,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def deploy_environment() -> dict[str, str]:
    """What a deploy sets for the web processes (infra/ fills in the real values)."""
    return {
        "PINBOARD_SECRET_KEY": new_key(),
        "PINBOARD_ALLOWED_HOSTS": "pinboard.example.com",
        "PINBOARD_MEMCACHED": "10.0.1.10:11211",
        "PINBOARD_REDIS_URL": "redis://10.0.1.20:6379/0",
        "PINBOARD_BROKER_URL": "redis://10.0.1.20:6379/1",
        "PINBOARD_S3_BUCKET": "pinboard-media",
        "PINBOARD_S3_REGION": "eu-west-1",
        "PINBOARD_MEDIA_DOMAIN": "media.pinboard.example.com",
    }


def test_production_settings_pass_the_deploy_checks(tmp_path: Path) -> None:
    result = run_manage(tmp_path, "pinboard.settings.prod", **deploy_environment())
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout, result.stdout
    assert not (tmp_path / "var" / "secret_key").exists()  # production never makes one


def _weak_keys() -> list[tuple[str, str | None]]:
    strong = new_key()
    return [
        ("missing", None),
        ("empty", ""),
        ("too short", strong[: MIN_LENGTH - 1]),
        ("too few distinct characters", "ab" * MIN_LENGTH),
        ("django's insecure default", "django-insecure-" + strong),
    ]


@pytest.mark.parametrize(("why", "key"), _weak_keys(), ids=[why for why, _ in _weak_keys()])
def test_production_refuses_to_start_with_a_weak_key(
    tmp_path: Path, why: str, key: str | None
) -> None:
    env = deploy_environment()
    if key is None:
        del env["PINBOARD_SECRET_KEY"]
    else:
        env["PINBOARD_SECRET_KEY"] = key
    result = run_manage(tmp_path, "pinboard.settings.prod", **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured: PINBOARD_SECRET_KEY" in result.stderr, result.stderr


def test_the_embedded_default_makes_a_private_key_on_first_start(tmp_path: Path) -> None:
    first = run_manage(tmp_path, "pinboard.settings.dev")
    assert first.returncode == 0, first.stderr  # it started (with DEBUG's deploy warnings)
    path = tmp_path / "var" / "secret_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    key = path.read_text().strip()
    assert len(key) >= MIN_LENGTH
    run_manage(tmp_path, "pinboard.settings.dev")
    assert path.read_text().strip() == key  # kept across starts
    assert key_file(tmp_path / "another_install") != key  # one key per install


def test_a_concurrent_first_start_ends_with_one_key(tmp_path: Path) -> None:
    path = tmp_path / "secret_key"
    code = f"from pathlib import Path; from pinboard.settings.secret import key_file; print(key_file(Path({str(path)!r})))"
    starts = [
        subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    keys = {start.communicate(timeout=60)[0].strip() for start in starts}
    assert len(keys) == 1 and keys == {path.read_text().strip()}
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]  # no temporary file left


def test_a_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret_key"
    key_file(path)
    path.chmod(0o644)
    with pytest.raises(ImproperlyConfigured, match="chmod 600"):
        key_file(path)


def test_no_secret_key_is_written_in_the_repository() -> None:
    """Every key comes from the environment, a private file or ``new_key()``: none is a
    literal in the tracked files, where anyone could read it."""
    literal = re.compile(r"SECRET_KEY[\"']?\s*[:=,]\s*[\"']([^\"'\n]+)[\"']")
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    found = set()
    for name in filter(None, tracked):
        path = REPO / name.decode()
        if path.is_file() and path.suffix in {".py", ".md", ".toml", ".cfg", ".env", ".sh", ""}:
            found |= set(literal.findall(path.read_text(errors="replace")))
    assert found == set(), found
