"""The Puppet profile's shell scripts, run against a fake `aws`: the environment file's
secrets from SSM and Secrets Manager, and the shard hosts' MySQL accounts (the metrics
exporter's among them)."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.infra.puppet_checks import PUPPET_DIR

# -- the environment file's secrets ------------------------------------------------------

PINBOARD_ENV = PUPPET_DIR / "modules" / "profile" / "files" / "pinboard-env"


@pytest.fixture
def fake_aws(tmp_path: Path) -> Path:
    """An `aws` that answers `ssm get-parameter --name N` and `secretsmanager
    get-secret-value --secret-id N` from the file tmp_path/ssm/<N after its last / or :> (and fails
    for one that has none), and a `chgrp` that does nothing: no AWS, no pinboard group."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "ssm").mkdir()
    (bin_dir / "aws").write_text(
        "#!/bin/sh\n"
        'while [ "$1" != "--name" ] && [ "$1" != "--secret-id" ]; do shift; done\n'
        f'cat "{tmp_path}/ssm/${{2##*[:/]}}"\n'
    )
    (bin_dir / "chgrp").write_text("#!/bin/sh\nexit 0\n")
    for program in bin_dir.iterdir():
        program.chmod(0o755)
    return tmp_path


def _pinboard_env(
    workdir: Path, *options: str, operator: str = "false", control: tuple[str, ...] = ()
) -> int:
    args = [str(workdir / "public"), str(workdir / "env"), "eu-west-1", "/pinboard/staging/"]
    return subprocess.run(
        ["sh", str(PINBOARD_ENV), *options, *args, operator, *control],
        env={**os.environ, "PATH": f"{workdir / 'bin'}:{os.environ['PATH']}"},
        capture_output=True,
        check=False,
    ).returncode


def test_environment_file_gets_the_secrets_from_ssm(fake_aws: Path) -> None:
    ssm = fake_aws / "ssm"
    (fake_aws / "public").write_text("DJANGO_SETTINGS_MODULE=pinboard.settings.prod\n")
    (ssm / "secret_key").write_text("k" * 50 + "\n")
    (ssm / "mysql_app_password").write_text("app-password\n")

    assert _pinboard_env(fake_aws, "--check") != 0  # no file yet
    assert _pinboard_env(fake_aws) == 0
    env = fake_aws / "env"
    assert env.read_text() == (
        "DJANGO_SETTINGS_MODULE=pinboard.settings.prod\n"
        f"PINBOARD_SECRET_KEY={'k' * 50}\n"
        "PINBOARD_MYSQL_LOGIN=pinboard:app-password\n"
    )
    assert stat.S_IMODE(env.stat().st_mode) == 0o640
    assert _pinboard_env(fake_aws, "--check") == 0

    (ssm / "mysql_app_password").write_text("rotated\n")
    assert _pinboard_env(fake_aws, "--check") != 0  # the next apply rewrites it


def test_environment_file_names_the_control_database_with_a_quoted_login(
    fake_aws: Path,
) -> None:
    ssm = fake_aws / "ssm"
    (fake_aws / "public").write_text("DJANGO_SETTINGS_MODULE=pinboard.settings.prod\n")
    (ssm / "secret_key").write_text("k" * 50 + "\n")
    (ssm / "mysql_app_password").write_text("app-password\n")
    (ssm / "mysql_admin_password").write_text("admin-password\n")
    (ssm / "mysql_replication_password").write_text("repl-password\n")
    (ssm / "control_db_password").write_text("p@ss/w:rd\n")
    control = ("db.example:3306/pb",)

    assert _pinboard_env(fake_aws, operator="true", control=control) == 0
    lines = (fake_aws / "env").read_text().splitlines()
    assert "PINBOARD_MYSQL_ADMIN=admin:admin-password" in lines
    assert "PINBOARD_MYSQL_REPLICATION=repl:repl-password" in lines
    assert (
        "PINBOARD_CONTROL_DATABASE=mysql://pinboard_site:p%40ss%2Fw%3Ard@db.example:3306/pb"
        "?ssl_ca=/etc/pinboard/rds-ca.pem"
    ) in lines
    assert _pinboard_env(fake_aws, "--check", operator="true", control=control) == 0
    # A host told of no control database would drop the line: not what is there now.
    assert _pinboard_env(fake_aws, "--check", operator="true") != 0


def test_a_shard_hosts_environment_file_has_the_admin_login_but_not_the_sites_key(
    fake_aws: Path,
) -> None:
    ssm = fake_aws / "ssm"  # no secret_key: the shard hosts' role may not read it
    (fake_aws / "public").write_text("DJANGO_SETTINGS_MODULE=pinboard.settings.prod\n")
    (ssm / "mysql_app_password").write_text("app-password\n")
    (ssm / "mysql_admin_password").write_text("admin-password\n")
    (ssm / "mysql_replication_password").write_text("repl-password\n")

    assert _pinboard_env(fake_aws, operator="true") != 0  # the site's key is asked for
    assert _pinboard_env(fake_aws, "--no-secret-key", operator="true") == 0
    assert (fake_aws / "env").read_text() == (
        "DJANGO_SETTINGS_MODULE=pinboard.settings.prod\n"
        "PINBOARD_MYSQL_LOGIN=pinboard:app-password\n"
        "PINBOARD_MYSQL_ADMIN=admin:admin-password\n"
        "PINBOARD_MYSQL_REPLICATION=repl:repl-password\n"
    )
    assert _pinboard_env(fake_aws, "--check", "--no-secret-key", operator="true") == 0


def test_environment_file_is_left_alone_when_ssm_fails(fake_aws: Path) -> None:
    ssm = fake_aws / "ssm"
    (fake_aws / "public").write_text("DJANGO_SETTINGS_MODULE=pinboard.settings.prod\n")
    (ssm / "secret_key").write_text("k" * 50 + "\n")
    (ssm / "mysql_app_password").write_text("app-password\n")
    (fake_aws / "env").write_text("before\n")

    # An operator host also needs mysql_admin_password, which is missing.
    assert _pinboard_env(fake_aws, operator="true") != 0
    # systemd would unquote a value with a quote in it.
    (ssm / "mysql_admin_password").write_text('pass"word\n')
    assert _pinboard_env(fake_aws, operator="true") != 0
    # ...and mysql_replication_password.
    (ssm / "mysql_admin_password").write_text("admin-password\n")
    assert _pinboard_env(fake_aws, operator="true") != 0

    assert (fake_aws / "env").read_text() == "before\n"
    assert sorted(p.name for p in fake_aws.iterdir()) == ["bin", "env", "public", "ssm"]


# -- a shard host's accounts --------------------------------------------------------------

MYSQL_ACCOUNTS = PUPPET_DIR / "modules" / "profile" / "files" / "pinboard-mysql-accounts"


def _mysql_accounts(workdir: Path, server: Any, *options: str) -> int:
    """The script against the test's MariaDB (the client's MYSQL_HOST/MYSQL_TCP_PORT), as
    root, the accounts allowed from 127.0.0.1, the exporter's client file in workdir."""
    args = ["eu-west-1", "/pinboard/staging/", "127.0.0.1", str(workdir / "exporter.cnf")]
    return subprocess.run(
        ["sh", str(MYSQL_ACCOUNTS), *options, *args],
        env={
            **os.environ,
            "PATH": f"{workdir / 'bin'}:{os.environ['PATH']}",
            "MYSQL_HOST": server.host,
            "MYSQL_TCP_PORT": str(server.port),
            "USER": "root",
        },
        capture_output=True,
        check=False,
    ).returncode


ACCOUNTS = "'pinboard'@'127.0.0.1', 'admin'@'127.0.0.1', 'repl'@'127.0.0.1', 'exporter'@'localhost'"


@pytest.fixture
def shard_passwords(fake_aws: Path, mariadb_server: Any) -> Iterator[Path]:
    """SSM's passwords of the four accounts; the accounts dropped after the test."""
    import MySQLdb

    for account in ("app", "admin", "replication", "exporter"):
        (fake_aws / "ssm" / f"mysql_{account}_password").write_text(f"{account}-password\n")
    yield fake_aws
    root = MySQLdb.connect(host=mariadb_server.host, port=mariadb_server.port, user="root")
    root.cursor().execute(f"DROP USER IF EXISTS {ACCOUNTS}")
    root.close()


def test_shard_host_accounts_come_from_ssm_with_the_local_clusters_grants(
    shard_passwords: Path, mariadb_server: Any
) -> None:
    import MySQLdb

    from toolkit.cluster.mysql import APP_GRANTS

    fake_aws, ssm = shard_passwords, shard_passwords / "ssm"

    def login(user: str, password: str) -> Any:
        return MySQLdb.connect(
            host=mariadb_server.host, port=mariadb_server.port, user=user, password=password
        )

    assert _mysql_accounts(fake_aws, mariadb_server, "--check") != 0
    assert _mysql_accounts(fake_aws, mariadb_server) == 0
    assert _mysql_accounts(fake_aws, mariadb_server, "--check") == 0
    site = login("pinboard", "app-password")
    cursor = site.cursor()
    cursor.execute("SHOW GRANTS")
    grants = [row[0] for row in cursor.fetchall()]
    site.close()
    (on_shards,) = [g for g in grants if " ON `db%`.* " in g]
    privileges = on_shards.removeprefix("GRANT ").partition(" ON ")[0].split(", ")
    assert sorted(privileges) == sorted(APP_GRANTS.split(", "))
    assert not any("SUPER" in g or "READ ONLY ADMIN" in g for g in grants)  # read_only binds it
    login("admin", "admin-password").close()
    replication = login("repl", "replication-password")
    cursor = replication.cursor()
    cursor.execute("SHOW GRANTS")
    (grant,) = [row[0] for row in cursor.fetchall()]
    replication.close()
    assert grant.startswith("GRANT REPLICATION SLAVE ON *.* TO ")  # and nothing else

    (ssm / "mysql_app_password").write_text("rotated\n")
    assert _mysql_accounts(fake_aws, mariadb_server, "--check") != 0  # the next apply runs it
    assert _mysql_accounts(fake_aws, mariadb_server) == 0
    login("pinboard", "rotated").close()
    with pytest.raises(MySQLdb.OperationalError):
        login("pinboard", "app-password")


def test_the_exporters_account_reads_status_and_replication_and_no_shard(
    shard_passwords: Path, mariadb_server: Any
) -> None:
    """As prometheus-mysqld-exporter logs in: over the server's socket, with the client
    file the script writes."""
    import MySQLdb

    fake_aws, ssm = shard_passwords, shard_passwords / "ssm"
    root = MySQLdb.connect(host=mariadb_server.host, port=mariadb_server.port, user="root")
    # A database of this test's own: the server is the suite's, its shards other tests'.
    root.cursor().execute("CREATE DATABASE IF NOT EXISTS exporter_probe")
    root.cursor().execute("CREATE TABLE IF NOT EXISTS exporter_probe.pins (id INT PRIMARY KEY)")
    assert _mysql_accounts(fake_aws, mariadb_server) == 0

    client = fake_aws / "exporter.cnf"
    assert client.read_text() == (
        f"[client]\nuser=exporter\npassword=exporter-password\nsocket={mariadb_server.socket_path}\n"
    )
    assert stat.S_IMODE(client.stat().st_mode) == 0o640
    exporter = MySQLdb.connect(read_default_file=str(client))
    cursor = exporter.cursor()
    cursor.execute("SHOW ALL SLAVES STATUS")  # SLAVE MONITOR, since MariaDB 10.5.9
    cursor.execute("SHOW GLOBAL STATUS LIKE 'Uptime'")
    cursor.execute("SELECT COUNT(*) FROM information_schema.processlist")
    assert cursor.fetchone()[0] >= 2  # PROCESS: the root session too
    cursor.execute("SELECT COUNT(*) FROM performance_schema.setup_instruments")
    with pytest.raises(MySQLdb.OperationalError, match="denied"):
        cursor.execute("SELECT * FROM exporter_probe.pins")
    exporter.close()
    # A remote address gets nothing: the account is the host's own.
    with pytest.raises(MySQLdb.OperationalError):
        MySQLdb.connect(
            host=mariadb_server.host,
            port=mariadb_server.port,
            user="exporter",
            password="exporter-password",
        )

    (ssm / "mysql_exporter_password").write_text("rotated\n")
    assert _mysql_accounts(fake_aws, mariadb_server, "--check") != 0
    assert _mysql_accounts(fake_aws, mariadb_server) == 0
    assert "password=rotated\n" in client.read_text()
    assert _mysql_accounts(fake_aws, mariadb_server, "--check") == 0
    client.write_text("edited by hand\n")
    assert _mysql_accounts(fake_aws, mariadb_server, "--check") != 0  # the next apply rewrites it
    root.cursor().execute("DROP DATABASE exporter_probe")
    root.close()
