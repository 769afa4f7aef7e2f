"""The control database (staff accounts, the journal, long jobs): SQLite under the var
directory on one host, or a MySQL database that a fleet's web and worker hosts share
(``PINBOARD_CONTROL_DATABASE``)."""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from pinboard.settings.base import control_database
from tests.conftest import unavailable
from tests.site.test_secret_key import REPO, deploy_environment

_databases = itertools.count(1)


def manage(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``manage.py ARGS`` under the production settings, in a fresh process."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("PINBOARD_")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={
            **inherited,
            **deploy_environment(),
            "DJANGO_SETTINGS_MODULE": "pinboard.settings.prod",
            "PINBOARD_VAR_DIR": str(tmp_path / "var"),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@contextlib.contextmanager
def mysql_control_database(server: Any, tmp_path: Path, options: str = "") -> Iterator[Any]:
    """A control database of its own on ``server``, migrated: yields (its URL, a cursor)."""
    if importlib.util.find_spec("MySQLdb") is None:
        unavailable("mysqlclient", "the MySQLdb module is not installed")
    import MySQLdb

    name = f"control_{os.getpid()}_{next(_databases)}"
    admin = MySQLdb.connect(host=server.host, port=server.port, user="root")
    try:
        cursor = admin.cursor()
        cursor.execute(f"CREATE DATABASE {name} {options}")
        url = f"mysql://root@{server.host}:{server.port}/{name}"
        done = manage(tmp_path, "migrate", "--verbosity", "0", PINBOARD_CONTROL_DATABASE=url)
        assert done.returncode == 0, done.stderr
        yield url, cursor, name
    finally:
        admin.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()


def test_a_fleet_shares_acontrol_database_on_mysql(mariadb_server: Any, tmp_path: Path) -> None:
    with mysql_control_database(mariadb_server, tmp_path) as (url, cursor, name):
        done = manage(tmp_path / "other-host", "ensure_operator", PINBOARD_CONTROL_DATABASE=url)
        assert done.returncode == 0, done.stderr

        cursor.execute(f"SELECT username, is_staff FROM {name}.auth_user")
        assert cursor.fetchall() == (("operator", 1),)  # made once, where every host sees it
        assert not (tmp_path / "var" / "control.sqlite3").exists()
        assert not (tmp_path / "other-host" / "var" / "control.sqlite3").exists()


def test_a_staff_log_in_names_its_account_exactly_where_the_database_would_not(
    mariadb_server: Any, tmp_path: Path
) -> None:
    """The deploy's control database compares names as utf8mb4_unicode_ci (infra's control_db),
    for which "Opérator " is "operator": its password guesses would log in to the operator's
    account while counted at another name (``reauth.staff_account_key``)."""
    collation = "CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
    with mysql_control_database(mariadb_server, tmp_path, collation) as (url, _cursor, _name):
        made = manage(tmp_path, "ensure_operator", PINBOARD_CONTROL_DATABASE=url)
        password = re.search(r"password: (\S+)", made.stdout)
        assert made.returncode == 0 and password, made.stderr
        spellings = ["operator", "Operator", "opérator", "operator ", "ÖPERATOR"]
        script = (
            "from django.contrib.auth import authenticate\n"
            f"for name in {spellings!r}:\n"
            f"    print(repr(name), authenticate(username=name, password={password[1]!r}))"
        )
        done = manage(tmp_path, "shell", "-c", script, PINBOARD_CONTROL_DATABASE=url)
        assert done.returncode == 0, done.stderr
        lines = [line for line in done.stdout.splitlines() if line.startswith("'")]
        found = dict(line.rsplit(" ", 1) for line in lines)
        assert found == {repr(name): "None" for name in spellings} | {"'operator'": "operator"}


def test_the_url_gives_the_login_the_database_and_the_tls_ca() -> None:
    database = control_database("mysql://site:p%40ss%3Aw@db.example:3307/control?ssl_ca=/etc/ca.pem")  # fmt: skip
    assert database["ENGINE"] == "django.db.backends.mysql"
    assert (database["USER"], database["PASSWORD"]) == ("site", "p@ss:w")  # unquoted
    assert (database["HOST"], database["PORT"], database["NAME"]) == ("db.example", 3307, "control")  # fmt: skip
    assert database["OPTIONS"] == {"charset": "utf8mb4", "ssl": {"ca": "/etc/ca.pem"}}


@pytest.mark.parametrize(
    "url",
    [
        "postgres://u:p@db/control",
        "mysql://u:p@db:3306/",
        "mysql:///control",
        "mysql://u:p@db/control?sslca=/etc/ca.pem",  # a misspelt option is not ignored
    ],
)
def test_acontrol_database_url_that_names_no_mysql_database_is_refused(
    url: str, tmp_path: Path
) -> None:
    done = manage(tmp_path, "check", PINBOARD_CONTROL_DATABASE=url)
    assert done.returncode != 0
    assert "PINBOARD_CONTROL_DATABASE must look like mysql://" in done.stderr
    with pytest.raises(ImproperlyConfigured):
        control_database(url)
