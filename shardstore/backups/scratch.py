"""A scratch MariaDB server on a backup's data directory: where a restore replays the
archive up to its target and copies the shards from, on this machine's loopback only, with
no account to log in to (``--skip-grant-tables``: nothing but this process can reach it).
Its binary log is on and starts at the backup's GTID position, so that after the replay
its position is the restored range's, which the hosts it is copied onto take.

``PointInTime`` is one made on first use and kept for the steps of an operation: a backup
unpacked, its server started, the archive replayed onto it up to the target."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ..control.mysql_hosts import HostError, MySQLHost
from .binlogs import gtid_state, replay
from .manifest import Manifest
from .physical import BackupError, unpack
from .store import BackupStore

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


class PointInTime:
    """Backup ``made`` restored into a scratch server and ``archive``'s logs replayed onto
    it up to ``to_time`` or ``to_gtid`` (neither: the last archived write), once asked for."""

    def __init__(self, store: BackupStore, made: Manifest, archive: str, *, to_time: float | None, to_gtid: str | None) -> None:  # fmt: skip
        self.store, self.made, self.archive = store, made, archive
        self.to_time, self.to_gtid = to_time, to_gtid
        self._server: ScratchServer | None = None
        self.position = ""  # the GTID position reached
        self.logs: list[str] = []  # the archived logs replayed

    def server(self) -> ScratchServer:
        if self._server is None:
            home = Path(tempfile.mkdtemp(prefix="pinboard-restore-"))
            try:
                unpack(self.store, self.made, home / "data")
                self._server = ScratchServer(home).start(self.made.gtid)
            except BaseException:
                shutil.rmtree(home, ignore_errors=True)
                raise
            done = replay(self.store, self.archive, after=self.made.gtid, into=self._server.address, login=("root", ""), to_time=self.to_time, to_gtid=self.to_gtid)  # fmt: skip
            with self._server.connect() as server:
                self.position, self.logs = server.gtid_binlog_pos(), done.logs
            if self.to_gtid and not _reached(self.position, self.to_gtid):
                raise BackupError(f"GTID {self.to_gtid} is not in {self.archive}'s archive: the replay reached {self.position}")  # fmt: skip
        return self._server

    def said(self) -> str:
        self.server()
        return f"backup {self.made.host}/{self.made.name} (at {self.made.gtid}) and {len(self.logs)} archived logs of {self.archive} replayed: at {self.position}"  # fmt: skip

    def drop(self) -> str:
        if self._server is not None:
            self._server.stop()
            shutil.rmtree(self._server.home, ignore_errors=True)
            self._server = None
        return "the scratch server stopped and removed"


def _reached(position: str, wanted: str) -> bool:
    have = gtid_state(position)
    return all(have.get(domain, -1) >= sequence for domain, sequence in gtid_state(wanted).items())


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
