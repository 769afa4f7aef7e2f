"""The nemesis's test hosts (toolkit/nemesis/network.py): a process in a namespace reaches
a server on loopback through the link, a server run in the namespace is reached from
loopback, a cut refuses exactly the ports it names, and ``heal`` and ``delete`` take every
trace away. (The cases themselves run on fresh local clusters: `make nemesis`, in CI
after the drills.)"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from tests.conftest import unavailable
from toolkit.nemesis.network import Namespace, namespaces
from toolkit.processes import HOST, free_port
from toolkit.site_processes import ROOT


@pytest.fixture
def can_make_namespaces() -> None:
    if os.geteuid() != 0:
        unavailable("network namespaces", "the tests do not run as root")
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            unavailable("network namespaces", f"{tool} is not installed")


def echo_server() -> tuple[socket.socket, int]:
    """A server on loopback that answers ``echo:`` and what it was sent."""
    server = socket.create_server((HOST, 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"echo:" + connection.recv(100))

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


def ask(port: int, namespace: Namespace | None = None) -> str:
    """What ``port`` answers to ``hi``, from the namespace (or from loopback)."""
    code = (
        "import socket, sys\n"
        "try:\n"
        f"    s = socket.create_connection(({HOST!r}, {port}), timeout=3)\n"
        "    s.sendall(b'hi'); print(s.recv(100).decode())\n"
        "except OSError as e:\n"
        "    print(type(e).__name__)\n"
    )
    argv = [sys.executable, "-c", code]
    done = subprocess.run(
        namespace.command(argv) if namespace else argv, capture_output=True, text=True, timeout=30
    )
    return done.stdout.strip() or done.stderr.strip()


@pytest.fixture
def served(can_make_namespaces: None) -> Iterator[tuple[int, int]]:
    a, a_port = echo_server()
    b, b_port = echo_server()
    yield a_port, b_port
    a.close()
    b.close()


def test_a_namespace_reaches_loopback_until_cut(served: tuple[int, int]) -> None:
    a, b = served
    host = Namespace("t-cut").create(inside=[a, b])
    try:
        assert ask(a, host) == ask(b, host) == "echo:hi"
        host.cut([a], "test")
        assert ask(a, host) == "ConnectionRefusedError"
        assert ask(b, host) == "echo:hi"  # only the port cut
        assert ask(a) == "echo:hi"  # and only from the namespace
        host.heal()
        assert ask(a, host) == "echo:hi"
    finally:
        host.delete()
    assert host.name not in namespaces()


def test_a_server_run_in_a_namespace_answers_on_loopback(can_make_namespaces: None) -> None:
    port = free_port()
    host = Namespace("t-serve").create(inside=[], outside=[port])
    code = (
        "import socket\n"
        f"s = socket.create_server(({HOST!r}, {port}))\n"
        "print('up', flush=True)\n"
        "c, _ = s.accept(); c.sendall(b'inside:' + c.recv(100))\n"
    )
    server = subprocess.Popen(
        host.command([sys.executable, "-c", code]), cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "up"
        assert ask(port) == "inside:hi"
    finally:
        server.kill()
        server.communicate()
        host.delete()
