"""Every environment variable is documented once, in the README's table, and read in one place."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"\b(?:PINBOARD|SHARDSTORE)_[A-Z0-9_]*[A-Z0-9]\b")
#: Where the code may read its environment, and what for.
READERS = {
    "pinboard/settings/environment.py": "the site's variables",
    "gunicorn.conf.py": "gunicorn's",
    "shardstore/cli.py": "the library's command line",
    "shardstore/control/signals.py": "the fault injector's stops in and after a step",
    "pinboard/celery.py": "DJANGO_SETTINGS_MODULE's default",
    "pinboard/metrics.py": "prometheus_client's PROMETHEUS_MULTIPROC_DIR",
    "pinboard/wsgi.py": "DJANGO_SETTINGS_MODULE's default",
    "manage.py": "DJANGO_SETTINGS_MODULE's default",
}


def tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "--", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return [ROOT / line for line in out.stdout.split()]


def readme_table() -> set[str]:
    text = (ROOT / "README.md").read_text()
    table = text.split("### Environment variables", 1)[1].split("\n#", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in NAME.findall(row.split(" | ")[0])}


def test_every_variable_the_code_names_is_in_the_readme_table() -> None:
    documented = readme_table()
    named: dict[str, str] = {}
    for file in tracked("*.py", "*.pp", "*.erb", "*.epp", "*.tf", "Makefile", "*.sh"):
        for name in NAME.findall(file.read_text()):
            named.setdefault(name, str(file.relative_to(ROOT)))
    # PINBOARD_MEMCACHED_<POOL> stands for one variable a pool; the file that says
    # "PINBOARD_ENV" names Puppet's environment file, not a variable.
    named = {
        name: file
        for name, file in named.items()
        if not name.startswith("PINBOARD_MEMCACHED_") and name != "PINBOARD_ENV"
    }
    missing = {name: file for name, file in named.items() if name not in documented}
    assert not missing, f"not in the README's table of environment variables: {missing}"
    assert "PINBOARD_MEMCACHED_<POOL>" in (ROOT / "README.md").read_text()


def test_the_environment_is_read_only_where_it_is_meant_to_be() -> None:
    readers = set()
    for file in tracked("*.py"):
        relative = str(file.relative_to(ROOT))
        if relative.startswith(("tests/", "bench/", "toolkit/", "infra/")):
            continue  # they set up processes' environments, and tests read their own knobs
        if re.search(r"os\.environ|os\.getenv|environ\.get", file.read_text()):
            readers.add(relative)
    assert readers == set(READERS)


def test_unset_and_set_variables_reach_the_settings() -> None:
    """A fresh interpreter (settings read the environment at import)."""
    probe = (
        "from django.conf import settings; import django; django.setup();"
        "print(settings.SHARDSTORE['CACHE_POOLS']['pins'], settings.CACHES['sessions']['BACKEND'],"
        " settings.CACHES['sessions'].get('KEY_PREFIX'), settings.CELERY_TASK_ALWAYS_EAGER,"
        " settings.API_TOKEN_SECONDS, settings.CACHES['ratelimit']['LOCATION'])"
    )

    def settings_with(**env: str) -> str:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("PINBOARD_", "DJANGO_"))}
        out = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT,
            env={**clean, "DJANGO_SETTINGS_MODULE": "pinboard.settings.test", **env},
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()

    locmem = "django.core.cache.backends.locmem.LocMemCache"
    assert settings_with() == f"[] {locmem} None True 2592000 ratelimit"
    found = settings_with(
        PINBOARD_MEMCACHED="10.0.0.1:11211,10.0.0.2:11211",
        PINBOARD_MEMCACHED_PINS="10.0.0.3:11211",
        PINBOARD_BROKER_URL="redis://10.0.0.4:6379/1",
        PINBOARD_API_TOKEN_SECONDS="3600",
    )
    assert found == f"['10.0.0.3:11211'] {locmem} None False 3600 ratelimit"  # never memcached
    graph = settings_with(PINBOARD_REDIS_URL="redis://10.0.0.5:6379/0")
    assert (
        graph
        == "[] pinboard.cache_backend.RedisCache sessions True 2592000 redis://10.0.0.5:6379/0"
    )
    own = settings_with(
        PINBOARD_REDIS_URL="redis://10.0.0.5:6379/0",
        PINBOARD_SESSIONS_REDIS_URL="redis://10.0.0.6:6379/1",
    )
    assert own.endswith(" redis://10.0.0.6:6379/1")


def test_rate_limits_from_the_environment_replace_the_defaults() -> None:
    code = (
        "from pinboard.settings import base;"
        "print(base.RATE_LIMITS['write_address'], base.RATE_LIMITS['login'])"
    )
    env = {**os.environ, "PINBOARD_RATE_LIMITS": "write_address=1000/60, search=5/1"}
    shown = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert shown.stdout.split("\n")[0] == "(1000, 60) (60, 60)", shown.stderr
    env["PINBOARD_RATE_LIMITS"] = "write_address=many"
    refused = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0 and "expected scope=count/seconds" in refused.stderr
