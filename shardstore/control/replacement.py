"""A dead or broken replica replaced by a spare host, with no person: the guard's second
duty (``guard.py`` watches and decides; this module says what is wrong with a replica,
finds the spare, and plans the replacement).

- **Dead**: the replica has not answered for the guard's ``replace_after`` seconds (far
  longer than a master's confirmation: a replica's restart costs no write, a copy costs
  the master's reads for minutes). **Broken**: it answers, but replicates from no one,
  or its replication stopped on an error.
- **The spare**: a MySQL host of the shard map that serves no range and is in service
  (``make cluster`` starts one; the deploy's are Terraform's, added to the map at bring-up).
  With none that answers, the provision command (``PINBOARD_PROVISION_COMMAND``) is run
  with the map's host names as its arguments; it prints ``NAME mysql://HOST:PORT``, a new
  server the map does not name, which is added to the map as a spare and used. With no
  command, or one that fails, the replacement is refused with the reason (an alert).
- **The replacement**: two journaled runs. The dead replica goes out of service (no
  failover promotes it, ``pairs`` counts it no more; back in service by hand once
  repaired, it is a spare), then the spare is rebuilt as the master's replica
  (``rebuild``: copy, catch up, compare, semi-sync, publish), resumable by the next guard
  if this one dies.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable
from typing import Any

from ..exceptions import InvalidTopology
from ..replicas import replicas_of
from . import documents
from .config_source import ConfigSource
from .emergency_checks import answers
from .failover import Connect
from .mysql_hosts import HostError

#: Makes a new MySQL server for the map, given the names the map has; returns its name
#: and address. ``command_provision`` makes one of the provision command.
Provision = Callable[[list[str]], tuple[str, str]]
PROVISION_SECONDS = 900
#: What a provision command prints: the new host's name and its address.
_PROVISIONED = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]{0,62})\s+(?P<address>mysql://\S+)$")


def trouble(connect: Connect, document: dict[str, Any], replica: str) -> str | None:
    """What is wrong with ``replica`` (a host the map names a replica), or None: "does not
    answer", or what its replication says."""
    address = document["hosts"][replica]
    if not answers(connect, replica, address):
        return "does not answer"
    with connect(address) as r:
        status = r.replica_status()
    if status is None:
        return "answers, but replicates from no one"
    if status.last_error and not (status.io_running and status.sql_running):
        return f"answers, but its replication stopped: {status.last_error}"
    return None


def spares(document: dict[str, Any]) -> list[str]:
    """The MySQL hosts of the map that serve no range and are in service."""
    serving = {name for r in document["ranges"] for name in (r["master"], *replicas_of(r))}
    out = set(document.get("out_of_service", []))
    return sorted(
        name
        for name, address in document["hosts"].items()
        if str(address).startswith("mysql://") and name not in serving and name not in out
    )


def find_spare(
    source: ConfigSource, connect: Connect, provision: Provision | None, *, author: str
) -> tuple[str, str]:
    """A spare that answers, and how it was found; InvalidTopology when there is none."""
    document = source.current(documents.SHARDS).document
    silent = []
    for name in spares(document):
        try:
            if answers(connect, name, document["hosts"][name]):
                return name, f"{name}, a spare of the map"
        except HostError:
            pass  # alive but refusing the operator: no use
        silent.append(name)
    pool = f"the map's spares ({', '.join(silent)}) do not answer" if silent else "the map has no spare"  # fmt: skip
    if provision is None:
        raise InvalidTopology(f"no spare host: {pool}, and no provision command is set (PINBOARD_PROVISION_COMMAND)")  # fmt: skip
    try:
        name, address = provision(sorted(document["hosts"]))
    except HostError as exc:
        raise InvalidTopology(f"no spare host: {pool}, and {exc}") from None
    add_spare(source, name, address, author=author)
    return name, f"{name}, provisioned ({pool})"


def add_spare(source: ConfigSource, name: str, address: str, *, author: str) -> None:
    """Publish the map with ``name`` at ``address``, a spare (refused if the map has it)."""
    current = source.current(documents.SHARDS)
    document = current.document
    if name in document["hosts"]:
        raise InvalidTopology(f"the provision command gave {name}, a host the map has already")
    new = documents.validate(documents.SHARDS, {**document, "hosts": {**document["hosts"], name: address}})  # fmt: skip
    source.publish(
        documents.SHARDS, new, author=author, reason=f"{name}: a spare, provisioned",
        expect_version=current.version,
    )  # fmt: skip


def command_provision(command: str | None) -> Provision | None:
    """The provision that runs ``command``; None if no command is set."""
    if not command:
        return None
    argv = shlex.split(command)

    def provision(names: list[str]) -> tuple[str, str]:
        try:
            done = subprocess.run(
                [*argv, *names], capture_output=True, text=True, timeout=PROVISION_SECONDS, check=False
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise HostError(f"the provision command did not run: {exc}") from None
        said = done.stdout.strip().splitlines()[-1:] or [done.stderr.strip() or "no output"]
        if done.returncode != 0:
            raise HostError(f"the provision command failed ({done.returncode}): {said[0]}")
        found = _PROVISIONED.match(said[0].strip())
        if found is None:
            raise HostError(f"the provision command printed {said[0]!r}, not NAME mysql://HOST:PORT")  # fmt: skip
        return found["name"], found["address"]

    return provision
