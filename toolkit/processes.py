"""The processes the toolkit starts, the same way for the tests, the benchmarks, the drills
and the local cluster: a data server (toolkit/servers/) or one of the site's own processes
(toolkit/site_processes.py), started and stopped by its own PID.

``Launched`` is the life cycle they share. A process started for a test run lives in that
run's session and is sent SIGTERM if the process that started it dies, so even a killed run
leaves nothing behind. One started ``detached`` gets a session of its own and no
parent-death signal, so it outlives the command that started it (the local cluster's); a
later command finds it again with ``adopt(pid, started)``. A process is known by its PID
*and* its start time (``Pid``), and its command line must still name the program, so a PID
the kernel has since handed to another process is never signalled. ``halt(kill=True)`` and
``restart()`` work the same for both lives: a drill kills a master with SIGKILL and brings
it back.

Everything listens on ``HOST``, the loopback address, on a port ``free_port()`` picks.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

HOST = "127.0.0.1"


class ServerStartError(RuntimeError):
    """A server could not be started, or did not answer in time."""


def free_port() -> int:
    """A TCP port on HOST that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


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
        #: A command the program runs under, exec'ing it (the nemesis's ``ip netns exec``).
        self.wrapper: list[str] = []

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
        argv = [*self.wrapper, *argv]
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


# So that no process outlives a test run that is killed (SIGKILL, a crash, a CI
# timeout) before its fixtures can stop it, Linux is asked to send each process
# SIGTERM when the process that started it dies (strictly: when the thread that
# started it ends, so start them from the main thread, as pytest's fixtures do).
# util-linux's setpriv sets that flag and then execs the program; a preexec_fn
# would run Python in the forked child, whose thread-exit cleanup can close the
# parent's other threads' database connections.
DIE_WITH_PARENT = ["setpriv", "--pdeathsig", "SIGTERM", "--"] if shutil.which("setpriv") else []


def _signal_group(leader: int, sig: signal.Signals) -> None:
    """Signal the process group ``leader`` heads (it was started in a session of its own)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, sig)


def stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (SIGSTOP: state T)."""
    stat = _stat(pid)
    return stat is not None and stat[0] == "T"
