"""The life cycle every data server shares (``Server``), and what its launchers need: where
programs are, a private directory in memory, a probe of a port.

A subclass says how to prepare its directory once, configure it before each launch, run the
server in the foreground and ask whether it answers; ``Server`` does the rest (a free port,
retries when another process takes it first, the wait for the first answer, stopping by
PID, a home kept across stops for the local cluster).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from toolkit.processes import HOST, Launched, ServerStartError, free_port

# Where sbin programs live when they are not on a non-root user's PATH.
_SBIN_DIRS = ("/usr/sbin", "/usr/local/sbin", "/sbin")

#: Lines of a server's log (or of a set-up command's output) quoted in a start-up error.
LOG_TAIL_LINES = 40

# The file in a server's home that says its one-off preparation is done.
_PREPARED = ".prepared"


@dataclass(frozen=True)
class Availability:
    """Whether a server can be started here, and why not when it cannot."""

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


class Server(Launched):
    """The common life cycle; subclasses say how to prepare, run and probe."""

    #: Human-readable name, used in messages ("MariaDB", "Redis", ...).
    name: ClassVar[str]
    #: How long ``start()`` waits for the server to answer, in seconds.
    start_timeout: ClassVar[float] = 30.0
    #: How long ``stop()`` waits after SIGTERM before it sends SIGKILL.
    stop_timeout: ClassVar[float] = 15.0
    #: The log's file name in the server's directory.
    log_name: ClassVar[str] = "server.log"

    def __init__(
        self,
        extra_args: Sequence[str] = (),
        *,
        home: Path | None = None,
        port: int = 0,
        log: Path | None = None,
        detached: bool = False,
    ) -> None:
        super().__init__(detached=detached)
        self.extra_args: list[str] = list(extra_args)
        self.host: str = HOST
        #: 0 until the first start picks a free one; a given port is kept.
        self.port: int = port
        #: A directory of its own that keeps the data across stops; None: a temporary one.
        self.home: Path | None = Path(home).resolve() if home is not None else None
        #: Where the data is while it is started: ``home``, or the temporary directory.
        self.tmpdir: Path | None = self.home
        self._log = Path(log).resolve() if log is not None else None

    # -- what subclasses provide ---------------------------------------------

    @classmethod
    def available(cls) -> Availability:
        """Whether the programs this server needs are installed."""
        raise NotImplementedError

    def _prepare(self) -> None:
        """One-off set-up in ``self.tmpdir`` (once per home) before the first launch."""

    def _configure(self) -> None:
        """Set-up in ``self.tmpdir`` before every launch (a config file naming the port)."""

    def _command(self) -> list[str]:
        """The command line that runs the server in the foreground."""
        raise NotImplementedError

    def _is_ready(self) -> bool:
        """True once the server answers a request on ``self.port``."""
        raise NotImplementedError

    @property
    def log_path(self) -> Path:
        """The file the server writes its log to."""
        if self._log is not None:
            return self._log
        assert self.tmpdir is not None, "the server is not started"
        return self.tmpdir / self.log_name

    # -- the life cycle --------------------------------------------------------

    @property
    def address(self) -> str:
        """``host:port``, as kazoo, pymemcache and friends accept it."""
        return f"{self.host}:{self.port}"

    def start(self) -> Self:
        """Start the server and wait until it answers; return ``self``."""
        if self.process is not None or self.alive:
            raise RuntimeError(f"{self.name} server is already running on {self.address}")
        availability = self.available()
        if not availability:
            raise ServerStartError(f"cannot start {self.name}: {availability.reason}")
        fixed = self.port != 0
        # The free port is only known to be free when we look, so another
        # process can take it before the server binds it: then try a new one.
        for _attempt in range(1 if fixed else 3):
            if self.home is None:
                self.tmpdir = _make_tmpdir(f"{self.name.lower()}-")
            if not fixed:
                self.port = free_port()
            try:
                self.prepare()
                self._launch()
                self._wait_until_ready()
                return self
            except _PortTaken:
                self.stop()
            except BaseException:
                self.stop()
                raise
        if fixed:
            raise ServerStartError(f"{self.name}: port {self.port} is taken by another process")
        raise ServerStartError(
            f"{self.name}: every free port we picked was taken before it could bind"
        )

    def prepare(self) -> Self:
        """The one-off set-up (``mariadb-install-db``...), if this server's directory has not
        had it; ``start()`` calls it. Safe from any thread: nothing is launched."""
        if self.home is None:
            if self.tmpdir is None:
                self.tmpdir = _make_tmpdir(f"{self.name.lower()}-")
            if not (self.tmpdir / _PREPARED).exists():
                self._prepare()
                (self.tmpdir / _PREPARED).touch()
            return self
        self.home.mkdir(parents=True, exist_ok=True)
        self.tmpdir = self.home
        if not (self.home / _PREPARED).exists():
            self._prepare()
            (self.home / _PREPARED).touch()
        return self

    def stop(self) -> None:
        """Stop the server (by its PID) and delete its data, unless it has a home. Safe to
        repeat."""
        self._end(kill=False, timeout=self.stop_timeout)
        if self.home is None and self.tmpdir is not None:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None

    def halt(self, *, kill: bool = False) -> None:
        """Stop the process (SIGKILL with ``kill``: a crash) but keep its port and data,
        so that ``restart()`` brings the same server back."""
        self._end(kill=kill, timeout=self.stop_timeout)

    def restart(self) -> Self:
        """Run a halted server again, on the same port with the same data."""
        if self.process is not None or self.alive or self.tmpdir is None or not self.port:
            raise RuntimeError(f"{self.name}: restart() follows halt()")
        self._launch()
        try:
            self._wait_until_ready()
        except _PortTaken:
            self.halt()
            raise ServerStartError(
                f"{self.name}: port {self.port} is taken by another process"
            ) from None
        return self

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid {self.pid} on {self.address}" if self.running else "stopped"
        return f"<{type(self).__name__} {state}>"

    def _launch(self) -> None:
        assert self.tmpdir is not None
        # Something else answers there: waiting for "our" server would talk to it. (Run in
        # a namespace of the nemesis, the server's port here is its link's.)
        if not self.wrapper and not _port_free(self.port):
            raise _PortTaken()
        self._configure()
        output = self._log if self._log is not None else self.tmpdir / "server.log"
        self._spawn(self._command(), cwd=self.tmpdir, log=output, env=None)

    def _wait_until_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout
        while True:
            returncode = self.process.poll()
            if returncode is not None:
                log = self._log_tail()
                if "Address already in use" in log:
                    raise _PortTaken()
                raise ServerStartError(
                    f"{self.name} exited with code {returncode} before it accepted "
                    f"connections on {self.address}.\n{self._quote_log(log)}"
                )
            if self._is_ready():
                return
            if time.monotonic() > deadline:
                raise ServerStartError(
                    f"{self.name} did not answer on {self.address} within "
                    f"{self.start_timeout:.0f}s.\n{self._quote_log(self._log_tail())}"
                )
            time.sleep(0.05)

    def _log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError as error:
            return f"(no log: {error})"
        return "\n".join(lines[-LOG_TAIL_LINES:])

    def _quote_log(self, log: str) -> str:
        return f"--- last lines of {self.log_path} ---\n{log}\n--- end of log ---"


class _PortTaken(Exception):
    """Internal: the server found its port taken; start() retries."""


# -- helpers ---------------------------------------------------------------------


def find_program(*names: str) -> str | None:
    """The path of the first of ``names`` found on PATH or in the sbin dirs."""
    search_path = os.pathsep.join([os.environ.get("PATH", os.defpath), *_SBIN_DIRS])
    for name in names:
        found = shutil.which(name, path=search_path)
        if found is not None:
            return found
    return None


_TMPDIR_PREFIX = "pinboard-test-"


def _make_tmpdir(prefix: str) -> Path:
    """A fresh private directory, in memory (/dev/shm) when possible.

    Its name carries our PID.  A run killed too hard to clean up (SIGKILL)
    leaves its directories behind; they are deleted here, by a later run,
    once the process named in them is gone.
    """
    shm = Path("/dev/shm")
    parent = (
        shm if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK) else Path(tempfile.gettempdir())
    )
    for leftover in parent.glob(f"{_TMPDIR_PREFIX}*-*"):
        owner = leftover.name[len(_TMPDIR_PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and not _process_exists(int(owner)):
            shutil.rmtree(leftover, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{_TMPDIR_PREFIX}{os.getpid()}-{prefix}", dir=parent))


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, but belongs to someone else
    return True


def _port_free(port: int) -> bool:
    """Whether nothing listens on ``port`` of HOST (a closed port in TIME_WAIT is free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
        return True


def exchange(host: str, port: int, request: bytes | None, timeout: float = 1.0) -> bytes:
    """Send ``request`` (if any) and return the first reply; b"" on any error."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            if request is not None:
                connection.sendall(request)
            return connection.recv(4096)
    except OSError:
        return b""
