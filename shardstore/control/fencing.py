"""Fencing a MySQL master that cannot be reached, before its replica is promoted (as
pinterest/mysql_utils' ``fence_server``): a master the operator cannot reach may still be
alive and reached by a process that missed the new map, whose writes would be thrown away
when the host is rebuilt. The fence makes sure it takes none.

The fence is a command (``PINBOARD_FENCE_COMMAND``), run with the host's name and its
``host:port`` as its last two arguments; it must exit 0 only once the host can take no
write: on the local cluster it stops the server's process (``python -m toolkit.cluster
fence``); in the AWS deploy (infra/puppet's ``pinboard-fence-mysql``) it swaps the
instance's security groups for one that lets nothing in or out, then stops the instance.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable

from .mysql_hosts import NO_ANSWER, HostError, MySQLHost, endpoint

#: Fences a host, given its name and its address in the shard map; returns a note.
Fence = Callable[[str, str], str]
FENCE_SECONDS = 60
#: How often a fence tries ``read_only`` on a master that answers, ending its client
#: sessions before each try (a commit that came in between holds the commit lock again).
FREEZE_TRIES = 3


def command_fence(command: str | None) -> Fence | None:
    """The fence that runs ``command``; None if no command is set."""
    if not command:
        return None
    argv = shlex.split(command)

    def fence(host: str, address: str) -> str:
        target = "{}:{}".format(*endpoint(address))
        try:
            done = subprocess.run(
                [*argv, host, target],
                capture_output=True,
                text=True,
                timeout=FENCE_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise HostError(f"the fence command for {host} did not run: {exc}") from None
        said = (done.stdout.strip() or done.stderr.strip()).splitlines()[-1:] or ["no output"]
        if done.returncode != 0:
            raise HostError(f"the fence command for {host} failed ({done.returncode}): {said[0]}")
        return f"{host} fenced: {said[0]}"

    return fence


def freeze(connect: Callable[[str], MySQLHost], host: str, address: str) -> str:
    """If ``host`` answers: its ``read_only`` set and its client sessions ended, privileged
    ones included. A commit waiting for a replica's acknowledgement holds the commit lock
    that ``read_only`` waits for; ended with its session, it is never acknowledged (it
    commits on ``host`` alone). A note, with ``host``'s binary log position."""
    try:
        master = connect(address)
    except HostError as exc:  # the fence command is all there is to do
        return f"{host} {'gives no answer' if exc.errno in NO_ANSWER else f'refuses the operator ({exc})'}"  # fmt: skip
    with master:
        ended = 0
        for attempt in range(1, FREEZE_TRIES + 1):
            ended += master.kill_client_sessions()
            try:
                master.set_read_only(True)
                break
            except HostError:
                if attempt == FREEZE_TRIES:
                    raise
        ended += master.kill_client_sessions()
        position = master.gtid_binlog_pos()
    return f"{host} read_only, {ended} client sessions ended; its binary log at {position or 'nothing'}"  # fmt: skip
