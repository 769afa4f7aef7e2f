"""Real server processes for the tests, the benchmarks, the drills and the local cluster.

Each class here starts one real server process (MariaDB, Redis, memcached,
ZooKeeper); the site's own processes (gunicorn, a Celery worker) are in
toolkit/site_processes.py. By default a server belongs to the test run alone:

* it listens on 127.0.0.1 only, on a free port picked at start;
* it keeps all of its data in a fresh temporary directory (under /dev/shm when
  the machine has it, so nothing touches a disk), removed again by ``stop()``;
* it is sent SIGTERM if the process that started it dies, so even a killed
  test run leaves no server behind;
* ``start()`` returns only once the server answers a real request, or raises
  ``ServerStartError`` with the tail of the server's own log;
* ``stop()`` signals the process by its own PID (never by name), so servers
  that other people or the system run on the default ports are left alone.

All classes have the same shape::

    if not RedisServer.available():
        print(RedisServer.available().reason)
    server = RedisServer().start()
    try:
        ...  # connect to server.host, server.port
    finally:
        server.stop()

or, equivalently, ``with RedisServer() as server: ...``.  ``extra_args`` lets a
caller add options (for example binary logging for replication tests).

The local cluster (toolkit/cluster.py) runs the same classes for longer lives:
``home=DIR`` keeps the data there across stops and starts (prepared once, never
deleted), ``port=N`` reuses the port chosen at the first start, and
``detached=True`` puts the server in a session of its own, with no parent-death
signal, so it outlives the command that started it. A later command finds it
again with ``adopt(pid, started)``: a process is known by its PID *and* its
start time (``Pid``), and its command line must still name the program, so a
PID the kernel has since handed to another process is never signalled.
``halt(kill=True)`` and ``restart()`` work the same for both lives: a drill
kills a master with SIGKILL and brings it back on the same port and data.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

HOST = "127.0.0.1"

# Where sbin programs live when they are not on a non-root user's PATH.
_SBIN_DIRS = ("/usr/sbin", "/usr/local/sbin", "/sbin")

# Lines of the server's log quoted in a start-up error.
_LOG_TAIL_LINES = 40

# The file in a server's home that says its one-off preparation is done.
_PREPARED = ".prepared"


class ServerStartError(RuntimeError):
    """A server could not be started, or did not answer in time."""


@dataclass(frozen=True)
class Availability:
    """Whether a server can be started here, and why not when it cannot."""

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


# -- processes known by PID and start time -------------------------------------------

#: Children this process started and has not reaped yet. Holding them here lets any object
#: (a reloaded cluster, say) reap a child it signals, and keeps a child that outlives the
#: object that started it from being garbage-collected while it runs.
_children: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class Pid:
    """A process known by its PID and its start time (clock ticks after boot, from
    ``/proc/PID/stat``): once that process is gone the kernel may give its PID to another,
    whose start time differs, so a stale record never signals a stranger."""

    pid: int
    started: int

    @classmethod
    def of(cls, pid: int) -> Pid | None:
        """The running process ``pid``, or None if there is none (or only its zombie)."""
        stat = _stat(pid)
        return None if stat is None or stat[0] == "Z" else cls(pid, int(stat[19]))

    def command_line(self) -> str:
        """Its command line, arguments joined by spaces ("" once it is gone)."""
        try:
            raw = Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            return ""
        return raw.replace(b"\0", b" ").decode(errors="replace").strip()

    def alive(self, signatures: Sequence[str] = ()) -> bool:
        """Whether this very process still runs and its command line shows one of
        ``signatures`` (any, when there are none). Reaps it if it is our dead child."""
        child = _children.get(self.pid)
        if child is not None and child.poll() is not None:
            del _children[self.pid]
        if Pid.of(self.pid) != self:
            return False
        line = self.command_line()
        return bool(line) and (not signatures or any(word in line for word in signatures))

    def exited(self) -> bool:
        """Whether this process is wholly gone: its main thread may be a zombie while its
        other threads still hold its sockets (a port is free only once all are gone)."""
        child = _children.get(self.pid)
        if child is not None and child.poll() is not None:
            del _children[self.pid]
        stat = _stat(self.pid)
        if stat is None or int(stat[19]) != self.started:
            return True
        try:
            tasks = [task.name for task in Path(f"/proc/{self.pid}/task").iterdir()]
        except OSError:
            return True
        return all((_stat(self.pid, task) or ["X"])[0] in "ZX" for task in tasks)

    def end(self, *, kill: bool, timeout: float, signatures: Sequence[str] = ()) -> None:
        """SIGTERM (SIGKILL with ``kill``) if it is still this process; wait up to
        ``timeout`` seconds for it to be gone, then SIGKILL it."""
        if not self.alive(signatures):
            self.wait_exited(timeout)  # already dying (or gone): let it finish
            return
        for sig in (signal.SIGKILL if kill else signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                return
            if self.wait_exited(timeout):
                return
        raise RuntimeError(f"process {self.pid} outlived SIGKILL")

    def wait_exited(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.exited():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True


def _stat(pid: int, task: str | None = None) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` (or of one of its threads) after the command name
    (state first), or None."""
    path = f"/proc/{pid}/stat" if task is None else f"/proc/{pid}/task/{task}/stat"
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


class Launched:
    """The part every launcher shares: a process started by its own PID, in this process's
    session (killed with it) or detached (a session of its own), found again by ``adopt``."""

    #: Words one of which the process's command line always shows, even once the program
    #: has renamed itself (redis-server and gunicorn do): checked before each signal.
    signatures: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, detached: bool = False) -> None:
        self.detached = detached
        #: The process as this object started it (None once halted, or when adopted).
        self.process: subprocess.Popen[bytes] | None = None
        #: The process running now, started here or adopted.
        self.running: Pid | None = None
        #: Called after each launch (the local cluster records the new PID).
        self.on_launch: Callable[[], None] | None = None

    @property
    def pid(self) -> int | None:
        return self.running.pid if self.running is not None else None

    @property
    def alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        return self.running is not None and self.running.alive(self.signatures)

    def halt(self, *, kill: bool = False) -> None:
        """Stop the process (SIGKILL with ``kill``: a crash); ``restart()`` runs it again."""
        raise NotImplementedError

    def restart(self) -> Self:
        """Run a halted process again (a server on the same port, with the same data)."""
        raise NotImplementedError

    def adopt(self, pid: int, started: int) -> bool:
        """Take over a process another command started (from its recorded PID and start
        time) if it still runs; whether it does."""
        if self.process is not None:
            raise RuntimeError(f"{self!r} already runs a process of its own")
        candidate = Pid(pid, started)
        self.running = candidate if candidate.alive(self.signatures) else None
        return self.running is not None

    def _spawn(self, argv: Sequence[str], *, cwd: Path, log: Path, env: dict[str, str] | None) -> None:  # fmt: skip
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as output:
            process = subprocess.Popen(
                list(argv) if self.detached else [*DIE_WITH_PARENT, *argv],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                # Its own process group, so that stopping it stops what it forked too
                # (gunicorn's workers), whether or not it outlives its launcher.
                start_new_session=True,
            )
        _children[process.pid] = process
        self.process = process
        # setpriv execs the program in place: same PID, same start time.
        self.running = Pid.of(process.pid) or Pid(process.pid, -1)
        if self.on_launch is not None:
            self.on_launch()

    def _end(self, *, kill: bool, timeout: float) -> None:
        """Stop the process, started here or adopted, and forget it."""
        process, self.process = self.process, None
        running, self.running = self.running, None
        if process is not None:
            if process.poll() is None:
                _signal_group(process.pid, signal.SIGKILL if kill else signal.SIGTERM)
                try:
                    process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            _signal_group(process.pid, signal.SIGKILL)  # any child it left behind
            _children.pop(process.pid, None)
        elif running is not None:
            running.end(kill=kill, timeout=timeout, signatures=self.signatures)


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

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid {self.pid} on {self.address}" if self.running else "stopped"
        return f"<{type(self).__name__} {state}>"

    def _launch(self) -> None:
        assert self.tmpdir is not None
        if not _port_free(self.port):
            # Something else answers there: waiting for "our" server would talk to it.
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
        return "\n".join(lines[-_LOG_TAIL_LINES:])

    def _quote_log(self, log: str) -> str:
        return f"--- last lines of {self.log_path} ---\n{log}\n--- end of log ---"


class _PortTaken(Exception):
    """Internal: the server found its port taken; start() retries."""


# -- MariaDB ---------------------------------------------------------------------


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
        if _find_program("mariadbd", "mysqld") is None:
            return Availability(False, "mariadbd is not installed (Debian package: mariadb-server)")
        if _find_program("mariadb-install-db", "mysql_install_db") is None:
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
        install_db = _find_program("mariadb-install-db", "mysql_install_db")
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
            tail = "\n".join(result.stdout.splitlines()[-_LOG_TAIL_LINES:])
            raise ServerStartError(
                f"mariadb-install-db exited with code {result.returncode}.\n"
                f"--- last lines of its output ---\n{tail}\n--- end of output ---"
            )

    def _command(self) -> list[str]:
        mariadbd = _find_program("mariadbd", "mysqld")
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
        greeting = _exchange(self.host, self.port, None)
        return len(greeting) > 4 and greeting[4] == 10


# -- Redis -----------------------------------------------------------------------


class RedisServer(Server):
    """A private redis-server with no persistence at all."""

    name = "Redis"
    signatures = ("redis-server",)

    @classmethod
    def available(cls) -> Availability:
        if _find_program("redis-server") is None:
            return Availability(
                False, "redis-server is not installed (Debian package: redis-server)"
            )
        return Availability(True)

    @property
    def url(self) -> str:
        """A ``redis://`` URL for database 0, for redis-py and Celery."""
        return f"redis://{self.host}:{self.port}/0"

    def _command(self) -> list[str]:
        redis_server = _find_program("redis-server")
        assert redis_server is not None and self.tmpdir is not None
        return [
            redis_server,
            "--port", str(self.port),
            "--bind", self.host,
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.tmpdir),
            *self.extra_args,
        ]  # fmt: skip

    def _is_ready(self) -> bool:
        return _exchange(self.host, self.port, b"PING\r\n").startswith(b"+PONG")


# -- memcached -------------------------------------------------------------------


class MemcachedServer(Server):
    """A private memcached with 64 MB of memory, TCP only."""

    name = "memcached"
    signatures = ("memcached",)

    @classmethod
    def available(cls) -> Availability:
        if _find_program("memcached") is None:
            return Availability(False, "memcached is not installed (Debian package: memcached)")
        return Availability(True)

    def _command(self) -> list[str]:
        memcached = _find_program("memcached")
        assert memcached is not None
        # memcached refuses to run as root unless told which user to be.
        as_root = ["-u", "root"] if os.geteuid() == 0 else []
        return [
            memcached,
            "-l", self.host,
            "-p", str(self.port),
            "-U", "0",
            "-m", "64",
            *as_root,
            *self.extra_args,
        ]  # fmt: skip

    def _is_ready(self) -> bool:
        return _exchange(self.host, self.port, b"version\r\n").startswith(b"VERSION ")


# -- ZooKeeper -------------------------------------------------------------------

# Debian's libzookeeper-java ships one jar whose manifest Class-Path names all
# of its dependencies (netty, jute, slf4j-api, ...), so it is the whole
# class path.  It brings no SLF4J binding, and without one ZooKeeper logs
# nothing at all: slf4j-simple (a dependency of the same package) writes its
# log to stderr, which ends up in server.log.
_ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
_SLF4J_SIMPLE_JAR = Path("/usr/share/java/slf4j-simple.jar")


class ZooKeeperServer(Server):
    """A private standalone ZooKeeper, run in the foreground by java.

    ``extra_args`` are extra JVM options (``-Dzookeeper.<setting>=...`` sets
    most ZooKeeper settings).
    """

    name = "ZooKeeper"
    signatures = ("QuorumPeerMain",)
    start_timeout = 60.0

    @classmethod
    def available(cls) -> Availability:
        if _find_program("java") is None:
            return Availability(
                False, "java is not installed (Debian package: default-jre-headless)"
            )
        if not _ZOOKEEPER_JAR.is_file():
            return Availability(
                False,
                f"ZooKeeper is not installed (no {_ZOOKEEPER_JAR}; Debian package: zookeeper)",
            )
        return Availability(True)

    @property
    def config_path(self) -> Path:
        assert self.tmpdir is not None, "the server is not started"
        return self.tmpdir / "zoo.cfg"

    def _prepare(self) -> None:
        assert self.tmpdir is not None
        (self.tmpdir / "data").mkdir(exist_ok=True)

    def _configure(self) -> None:
        assert self.tmpdir is not None
        datadir = self.tmpdir / "data"
        self.config_path.write_text(
            "tickTime=2000\n"
            f"dataDir={datadir}\n"
            f"clientPort={self.port}\n"
            f"clientPortAddress={self.host}\n"
            "maxClientCnxns=0\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr\n"
        )

    def _command(self) -> list[str]:
        java = _find_program("java")
        assert java is not None
        classpath = [_ZOOKEEPER_JAR]
        if _SLF4J_SIMPLE_JAR.is_file():
            classpath.append(_SLF4J_SIMPLE_JAR)
        return [
            java,
            # A small, quick-to-start JVM is plenty for tests.
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.net.preferIPv4Stack=true",
            "-Dzookeeper.forceSync=no",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
            *self.extra_args,
            "-cp", ":".join(str(jar) for jar in classpath),
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            str(self.config_path),
        ]  # fmt: skip

    def _is_ready(self) -> bool:
        # "ruok" only says that the process is up; "srvr" answers "This
        # ZooKeeper instance is not currently serving requests" until it is.
        if _exchange(self.host, self.port, b"ruok") != b"imok":
            return False
        return b"Zookeeper version" in _exchange(self.host, self.port, b"srvr")


# -- helpers ---------------------------------------------------------------------


def _find_program(*names: str) -> str | None:
    """The path of the first of ``names`` found on PATH or in the sbin dirs."""
    search_path = os.pathsep.join([os.environ.get("PATH", os.defpath), *_SBIN_DIRS])
    for name in names:
        found = shutil.which(name, path=search_path)
        if found is not None:
            return found
    return None


def _run_as_root_args() -> list[str]:
    """mariadbd refuses to run as root unless it is told so."""
    return ["--user=root"] if os.geteuid() == 0 else []


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


def free_port() -> int:
    """A TCP port on HOST that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def _exchange(host: str, port: int, request: bytes | None, timeout: float = 1.0) -> bytes:
    """Send ``request`` (if any) and return the first reply; b"" on any error."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            if request is not None:
                connection.sendall(request)
            return connection.recv(4096)
    except OSError:
        return b""


# So that no server outlives a test run that is killed (SIGKILL, a crash, a CI
# timeout) before its fixtures can stop them, Linux is asked to send each
# server SIGTERM when the process that started it dies (strictly: when the
# thread that started it ends, so start servers from the main thread, as
# pytest's fixtures do). util-linux's setpriv sets that flag and then execs the
# server; a preexec_fn would run Python in the forked child, whose thread-exit
# cleanup can close the parent's other threads' database connections.
# toolkit/site_processes.py starts gunicorn behind it for the same reasons.
DIE_WITH_PARENT = ["setpriv", "--pdeathsig", "SIGTERM", "--"] if shutil.which("setpriv") else []


def _signal_group(leader: int, sig: signal.Signals) -> None:
    """Signal the process group ``leader`` heads (it was started in a session of its own)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, sig)
