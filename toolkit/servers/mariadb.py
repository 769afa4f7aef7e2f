"""MariaDB for the tests, the benchmarks and the local cluster: a private mariadbd."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from toolkit.processes import ServerStartError
from toolkit.servers.base import LOG_TAIL_LINES, Availability, Server, exchange, find_program


class MariaDBServer(Server):
    """A private mariadbd; ``root`` connects over TCP with no password.

    ``mariadb-install-db --auth-root-authentication-method=normal`` creates
    root@localhost, root@127.0.0.1 and root@::1 with an empty password and all
    privileges WITH GRANT OPTION, so ``MySQLdb.connect(host=server.host,
    port=server.port, user="root")`` works as is.

    The server is tuned for speed, not durability (no fsync at commit, no
    doublewrite, no binary log).  ``extra_args`` go last on mariadbd's command
    line, where they win over the defaults: ``["--log-bin", "--server-id=2"]``
    turns binary logging on for a replication test.
    """

    name = "MariaDB"
    signatures = ("mariadbd", "mysqld")
    start_timeout = 60.0
    log_name = "error.log"
    user = "root"

    @classmethod
    def available(cls) -> Availability:
        if find_program("mariadbd", "mysqld") is None:
            return Availability(False, "mariadbd is not installed (Debian package: mariadb-server)")
        if find_program("mariadb-install-db", "mysql_install_db") is None:
            return Availability(
                False,
                "mariadb-install-db is not installed (Debian package: mariadb-server)",
            )
        return Availability(True)

    @property
    def datadir(self) -> Path:
        assert self.tmpdir is not None, "the server is not started"
        return self.tmpdir / "data"

    @property
    def socket_path(self) -> Path:
        assert self.tmpdir is not None, "the server is not started"
        return self.tmpdir / "mysqld.sock"

    def _prepare(self) -> None:
        # --no-defaults must come first: it keeps /etc/mysql/*.cnf out of it.
        install_db = find_program("mariadb-install-db", "mysql_install_db")
        assert install_db is not None
        shutil.rmtree(self.datadir, ignore_errors=True)  # what a failed first start left
        command = [
            install_db,
            "--no-defaults",
            *_run_as_root_args(),
            f"--datadir={self.datadir}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ]
        result = subprocess.run(
            command,
            check=False,
            cwd=self.tmpdir,
            # Its bootstrap server's temporary tables go in our directory, not a shared /tmp.
            env={**os.environ, "TMPDIR": str(self.tmpdir)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=self.start_timeout,
        )
        if result.returncode != 0:
            tail = "\n".join(result.stdout.splitlines()[-LOG_TAIL_LINES:])
            raise ServerStartError(
                f"mariadb-install-db exited with code {result.returncode}.\n"
                f"--- last lines of its output ---\n{tail}\n--- end of output ---"
            )

    def _command(self) -> list[str]:
        mariadbd = find_program("mariadbd", "mysqld")
        assert mariadbd is not None and self.tmpdir is not None
        return [
            mariadbd,
            "--no-defaults",
            *_run_as_root_args(),
            f"--datadir={self.datadir}",
            f"--tmpdir={self.tmpdir}",
            f"--port={self.port}",
            f"--bind-address={self.host}",
            f"--socket={self.socket_path}",
            f"--pid-file={self.tmpdir / 'mysqld.pid'}",
            f"--log-error={self.log_path}",
            "--skip-name-resolve",
            "--skip-log-bin",
            "--innodb-flush-log-at-trx-commit=0",
            "--innodb-doublewrite=0",
            "--innodb-buffer-pool-size=256M",
            "--innodb-file-per-table=0",
            "--max-connections=500",
            *self.extra_args,
        ]

    def _is_ready(self) -> bool:
        # A MySQL server speaks first: its greeting packet starts with protocol
        # version 10 (an error packet, 0xff, would mean "refused").
        greeting = exchange(self.host, self.port, None)
        return len(greeting) > 4 and greeting[4] == 10


def _run_as_root_args() -> list[str]:
    """mariadbd refuses to run as root unless it is told so."""
    return ["--user=root"] if os.geteuid() == 0 else []
