"""The site's own processes for the tests, the benchmarks, the drills and the local cluster:
gunicorn, ``manage.py runserver``, a Celery worker, ``manage.py``. Each runs from the
project's root with the environment it is given, and is stopped by its own PID like the
servers of toolkit/servers/, whose ``Launched`` life cycle (toolkit/processes.py: temporary
or detached, adopted again by PID) it shares."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Self

from toolkit.processes import HOST, Launched, ServerStartError, free_port

ROOT = Path(__file__).resolve().parents[1]
#: ``PINBOARD_RATE_LIMITS`` for a site whose load comes from one address by design (the
#: drills' load, the benchmarks' workloads): every write and search let through.
LOOPBACK_LOAD_LIMITS = ",".join(
    f"{scope}=1000000/60" for scope in ("write", "write_address", "search", "search_address")
)


def manage(env: dict[str, str], *args: str) -> str:
    """Run ``manage.py ARGS`` from the project's root with ``env``; its output, or
    ``AssertionError`` with what it printed if it failed."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)} failed:\n{done.stdout}{done.stderr}"
    return done.stdout


class SiteProcess(Launched):
    """A process of the site itself (gunicorn, a Celery worker), run from the project's root
    with the given environment, its output in ``log``; stopped by its own PID."""

    #: How long ``stop()`` waits after SIGTERM (a worker finishes its tasks) before SIGKILL.
    stop_timeout: ClassVar[float] = 30.0

    def __init__(
        self, argv: Sequence[str], env: dict[str, str], log: Path, *, detached: bool = False
    ) -> None:
        super().__init__(detached=detached)
        self.argv, self.env, self.log = list(argv), env, Path(log)
        self._log_offset = 0  # where this start's output begins in ``log``

    def start(self) -> Self:
        if self.alive:
            raise RuntimeError(f"{self!r} is already running")
        self._log_offset = self.log.stat().st_size if self.log.exists() else 0
        self._spawn(self.argv, cwd=ROOT, log=self.log, env=self.env)
        return self

    def wait_ready(self, timeout: float = 60) -> None:
        """Return once the process serves (subclasses say how); ServerStartError if not."""

    def stop(self) -> None:
        self._end(kill=False, timeout=self.stop_timeout)

    def halt(self, *, kill: bool = False) -> None:
        """Stop the process (SIGKILL with ``kill``: a crash); ``restart()`` runs it again."""
        self._end(kill=kill, timeout=self.stop_timeout)

    def restart(self) -> Self:
        self.start().wait_ready()
        return self

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def _output_since_start(self) -> str:
        with open(self.log, "rb") as log:
            log.seek(self._log_offset)
            return log.read().decode(errors="replace")

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.running else "stopped"
        return f"<{type(self).__name__} {state}>"


class WebProcess(SiteProcess):
    """The site serving HTTP on ``port`` of HOST: ``wait_ready`` asks it for a page until it
    answers 200."""

    #: The page ``wait_ready`` asks for unless told another.
    ready_path: ClassVar[str] = "/"

    def __init__(
        self, argv: Sequence[str], env: dict[str, str], log: Path, *, port: int, detached: bool
    ) -> None:
        super().__init__(argv, env, log, detached=detached)
        self.port = port

    def url(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"

    def wait_ready(self, timeout: float = 60, path: str | None = None) -> None:
        import urllib.request

        program = self.signatures[0]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                raise ServerStartError(f"{program} exited:\n{self._output_since_start()[-3000:]}")
            # As the load balancer forwards it: production settings redirect plain HTTP.
            request = urllib.request.Request(
                self.url(path or self.ready_path), headers={"X-Forwarded-Proto": "https"}
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise ServerStartError(
            f"{program} did not answer in time:\n{self._output_since_start()[-3000:]}"
        )


#: gunicorn's settings, the same in production and here; the command line overrides the
#: size and the address.
GUNICORN_CONF = ROOT / "gunicorn.conf.py"


class GunicornSite(WebProcess):
    """The site under gunicorn on a loopback port (a free one unless ``port`` is given)."""

    signatures = ("gunicorn",)
    ready_path = "/healthz"

    def __init__(
        self,
        env: dict[str, str],
        log: Path,
        *,
        workers: int = 2,
        threads: int = 4,
        port: int = 0,
        app: str = "pinboard.wsgi",
        extra_args: Sequence[str] = ("--log-level", "warning"),
        detached: bool = False,
    ) -> None:
        port = port or free_port()
        argv = [
            sys.executable, "-m", "gunicorn", app, "-c", str(GUNICORN_CONF),
            "-w", str(workers), "--threads", str(threads),
            "-b", f"{HOST}:{port}", *extra_args,
        ]  # fmt: skip
        # The production settings (gunicorn.conf.py), with no access log: not under load.
        env = {"PINBOARD_GUNICORN_ACCESS_LOG": "", **env}
        super().__init__(argv, env, log, port=port, detached=detached)


class DevServer(WebProcess):
    """``manage.py runserver`` (no reloader) on a loopback port (a free one unless ``port`` is
    given): the site as ``make run`` serves it, static files and all."""

    signatures = ("runserver",)

    def __init__(
        self, env: dict[str, str], log: Path, *, port: int = 0, detached: bool = False
    ) -> None:
        port = port or free_port()
        argv = [sys.executable, "manage.py", "runserver", "--noreload", f"{HOST}:{port}"]
        super().__init__(argv, env, log, port=port, detached=detached)


class CeleryWorker(SiteProcess):
    """``celery -A pinboard worker``: one process (``--pool=solo``), or a prefork pool of
    ``concurrency`` processes."""

    signatures = ("celery",)

    def __init__(
        self,
        env: dict[str, str],
        log: Path,
        *,
        concurrency: int | None = None,
        log_level: str = "info",
        detached: bool = False,
    ) -> None:
        pool = ["--pool=solo"] if concurrency is None else [f"--concurrency={concurrency}"]
        argv = [sys.executable, "-m", "celery", "-A", "pinboard", "worker", *pool, f"--loglevel={log_level}"]  # fmt: skip
        super().__init__(argv, env, log, detached=detached)

    def wait_ready(self, timeout: float = 60) -> None:
        """Return once the worker has said ``ready.`` (connected to its broker; an info line,
        so not below ``log_level="info"``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                raise ServerStartError(f"celery exited:\n{self._output_since_start()[-3000:]}")
            if " ready." in self._output_since_start():
                return
            time.sleep(0.1)
        raise ServerStartError(
            f"celery did not say ready in time:\n{self._output_since_start()[-3000:]}"
        )
