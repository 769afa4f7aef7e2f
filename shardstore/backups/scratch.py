"""A scratch MariaDB server on a backup's data directory: where a restore replays the
archive up to its target and copies the shards from, on this machine's loopback only, with
no account to log in to (``--skip-grant-tables``: nothing but this process can reach it).
Its binary log is on and starts at the backup's GTID position, so that after the replay
its position is the restored range's, which the hosts it is copied onto take."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from ..control.mysql_hosts import HostError, MySQLHost
from .physical import BackupError

#: How long the server is given to start (InnoDB's crash recovery of a big backup included).
START_SECONDS = 300.0
#: Its server id: apart from the fleet's, so its GTIDs are never taken for a host's.
SERVER_ID = 4_290_000_000
PR_SET_PDEATHSIG = 1


class ScratchServer:
    """``mariadbd`` on ``home / "data"`` (a prepared backup), until ``stop``."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port = _free_port()
        self.address = f"mysql://root@127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, gtid: str) -> ScratchServer:
        """Start it, its binary log beginning at ``gtid`` (the backup's position)."""
        mariadbd = shutil.which("mariadbd") or shutil.which("mysqld")
        if mariadbd is None:
            raise BackupError("a restore needs mariadbd on this machine (Debian: mariadb-server)")
        as_root = ["--user=root"] if os.geteuid() == 0 else []
        self._process = subprocess.Popen(
            [mariadbd, "--no-defaults", *as_root, f"--datadir={self.home / 'data'}",
             f"--tmpdir={self.home}", f"--port={self.port}", "--bind-address=127.0.0.1",
             f"--socket={self.home / 'mysqld.sock'}", f"--pid-file={self.home / 'mysqld.pid'}",
             f"--log-error={self.home / 'error.log'}", "--skip-grant-tables", "--skip-name-resolve",
             "--log-bin=scratch-bin", f"--server-id={SERVER_ID}", "--skip-slave-start",
             "--innodb-flush-log-at-trx-commit=0", "--innodb-buffer-pool-size=128M"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_dies_with_its_parent,
        )  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                with self.connect() as server:
                    server.query("RESET MASTER")
                    server.query("SET GLOBAL gtid_binlog_state = %s", (gtid,))
                return self
            except HostError as exc:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    said = _tail(self.home / "error.log")
                    self.stop()
                    raise BackupError(f"the scratch server did not start: {said or exc}") from None
                time.sleep(0.5)

    def connect(self) -> MySQLHost:
        return MySQLHost(self.address, timeout=3600)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(60)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


def _dies_with_its_parent() -> None:
    """In the child, before mariadbd runs: a restore killed part way (``kill -9``) leaves no
    server behind (Linux's ``PR_SET_PDEATHSIG``: the thread that started it, to be exact,
    which is a command's main thread)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tail(path: Path) -> str:
    try:
        return " ".join(path.read_text(errors="replace").strip().splitlines()[-3:])
    except OSError:
        return ""
