"""The nemesis's test hosts: network namespaces of its own, each linked to the cluster's
loopback (link.py), and partitions made by nftables rules inside them.

A process run in a namespace (``Namespace.command``) reaches every server of the cluster
at the address it has in the cluster, through the link, until ``cut`` rejects its
connections to some of them (``reject with tcp reset``: a refused or reset connection,
as a firewall in between answers). Every rule lives in the namespace's own ruleset; a
namespace, its rules and its link go away together (``delete``). Nothing here touches
another address than the cluster's loopback, or the machine's own network settings.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Sequence

from toolkit.drills.base import DrillError
from toolkit.processes import Launched
from toolkit.site_processes import ROOT

#: Every namespace the nemesis makes is named so: ``stale`` removes those a run left.
PREFIX = "pbnem-"
TABLE = "nemesis"


class NetworkError(DrillError):
    """A namespace or a rule could not be made (under ``CI=true``, a failure: not a skip)."""


def _run(*argv: str, stdin: str | None = None) -> None:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NetworkError(f"{' '.join(argv)}: {done.stderr.strip() or done.stdout.strip()}")


def namespaces() -> list[str]:
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def remove_stale() -> list[str]:
    """Delete the namespaces an earlier nemesis left behind (it was killed); their names."""
    stale = [name for name in namespaces() if name.startswith(PREFIX)]
    for name in stale:
        _run("ip", "netns", "delete", name)
    return stale


class Namespace:
    """One test host: ``ip netns add``, loopback up, an empty nftables table, and a link
    that carries ``inside`` ports (servers on the cluster's loopback) in and ``outside``
    ports (servers run in the namespace) out."""

    def __init__(self, name: str) -> None:
        self.name = PREFIX + name
        self.link: subprocess.Popen[str] | None = None
        self.cuts: list[str] = []

    def create(self, inside: Iterable[int], outside: Iterable[int] = ()) -> Namespace:
        _run("ip", "netns", "add", self.name)
        try:
            _run("ip", "-n", self.name, "link", "set", "lo", "up")
            _run(*self.command(["nft", "-f", "-"]), stdin=(
                f"table inet {TABLE} {{\n"
                "  chain out { type filter hook output priority 0; policy accept; }\n"
                "}\n"
            ))  # fmt: skip
            self._start_link(sorted(set(inside)), sorted(set(outside)))
        except BaseException:
            self.delete()
            raise
        return self

    def _start_link(self, inside: Sequence[int], outside: Sequence[int]) -> None:
        self.link = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolkit.nemesis.link",
                self.name,
                "--inside",
                ",".join(map(str, inside)),
                "--outside",
                ",".join(map(str, outside)),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.link.stdout is not None
        line = self.link.stdout.readline()
        if line.strip() != "linked":
            self.link.kill()
            rest = self.link.stdout.read()
            raise NetworkError(f"the link into {self.name} did not start: {line}{rest}")

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside the namespace (``ip netns exec`` execs it: the same PID)."""
        return ["ip", "netns", "exec", self.name, *argv]

    def run_in(self, process: Launched) -> None:
        """Have ``process`` start inside the namespace from its next start on."""
        process.wrapper = self.command([])

    def cut(self, ports: Iterable[int], why: str) -> None:
        """Reject every connection from this namespace to ``ports`` (and reset those open)."""
        listed = ", ".join(str(p) for p in sorted(set(ports)))
        _run(*self.command(["nft", "add", "rule", "inet", TABLE, "out", "tcp", "dport", f"{{ {listed} }}", "reject", "with", "tcp", "reset"]))  # fmt: skip
        self.cuts.append(f"{self.name} cut from {listed} ({why})")

    def heal(self) -> None:
        """Remove every cut: the namespace reaches the whole cluster again."""
        _run(*self.command(["nft", "flush", "chain", "inet", TABLE, "out"]))
        self.cuts.clear()

    def delete(self) -> None:
        """The link stopped, the namespace and its rules gone (processes still running in it
        are the caller's to stop first)."""
        if self.link is not None:
            if self.link.poll() is None:
                self.link.kill()
                self.link.wait()
            if self.link.stdout is not None:
                self.link.stdout.close()
        if self.name in namespaces():
            _run("ip", "netns", "delete", self.name)
