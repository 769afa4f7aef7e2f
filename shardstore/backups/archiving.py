"""``shardstore backup archive``: one ``Archiver`` per master of the shard map, following the
map: a host that becomes master (a failover, a split, a restore) is archived from its next
pass on, and one that no longer is, once its archiver has put what it had. One process
archives at a time, the holder of the ``binlog-archive`` lock (ZooKeeper's in the deploy,
so a second operator host takes over when the first dies); a pass that cannot reach a
master or the store says so and goes on with the others."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ..control import backup_records, documents
from ..control.context import Control
from ..control.locks import HostsBusy
from ..exceptions import ShardStoreError
from .binlogs import INTERVAL, Archiver
from .store import BackupStore

#: The lock the archiving process holds.
ARCHIVING = "binlog-archive"
#: Seconds between two records of how far each master's archive has come.
RECORD_SECONDS = 5.0


def masters(control: Control) -> dict[str, str]:
    """Each MySQL master of the map in force, with its address."""
    document = control.source.current(documents.SHARDS).document
    names = {r["master"] for r in document["ranges"]}
    return {name: str(document["hosts"][name]) for name in sorted(names) if str(document["hosts"][name]).startswith("mysql://")}  # fmt: skip


class Archiving:
    """The archivers of the map's masters, each pass brought in line with the map."""

    def __init__(self, control: Control, store: BackupStore, spool: Path, say: Callable[[str], None]) -> None:  # fmt: skip
        self.control, self.store, self.spool, self.say = control, store, spool, say
        self.archivers: dict[str, Archiver] = {}
        self.caught_up: dict[str, float] = {}  # master -> when its archive last held all
        self._recorded = 0.0
        self.record_every = RECORD_SECONDS

    def archive_pass(self) -> None:
        now = masters(self.control)
        for name in sorted(set(self.archivers) - set(now)):
            self._pass(self.archivers[name])  # what it had, then no more
            self.archivers.pop(name).stop()
            self.say(f"{name} is no longer a master: its archiving stops")
        for name, address in now.items():
            try:
                archiver = self.archivers.get(name) or self._archiver(name, address)
            except ShardStoreError as exc:  # a master down: the next pass tries again
                self.say(f"{name}: {exc}")
                continue
            self.archivers[name] = archiver
            self._pass(archiver)
            if self._holds_all(archiver):
                self.caught_up[name] = time.time()
        if time.time() - self._recorded >= self.record_every and self.caught_up:
            backup_records.archived(self.control.source, self.caught_up)  # the lag's metric
            self._recorded = time.time()

    def _holds_all(self, archiver: Archiver) -> bool:
        """Whether the archive has every byte the master has logged."""
        try:
            with self.control.mysql(archiver.address) as server:
                [status] = server.query("SHOW MASTER STATUS")
        except (ShardStoreError, ValueError):
            return False
        return archiver.put.get(str(status["File"]), -1) >= int(status["Position"])

    def _archiver(self, name: str, address: str) -> Archiver:
        with self.control.mysql(address) as server:  # the operator's login, and its first log
            login, first = (server.user, server.password), str(server.query("SHOW BINARY LOGS")[0]["Log_name"])  # fmt: skip
        return Archiver(self.store, host=name, address=address, login=login, spool=self.spool / name, first=lambda: first, say=self.say)  # fmt: skip

    def _pass(self, archiver: Archiver) -> None:
        try:
            archiver.archive_pass()
        except ShardStoreError as exc:
            self.say(f"{archiver.host}: {exc}")

    def stop(self) -> None:
        for archiver in self.archivers.values():
            archiver.stop()


def keep_archiving(
    control: Control,
    store: BackupStore,
    *,
    spool: Path,
    instance: str,
    interval: float = INTERVAL,
    passes: int | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> None:
    """Archive the masters' binary logs pass after pass while this process holds the lock,
    else wait for it (``passes``: stop after that many, for a test)."""
    done = 0
    while passes is None or done < passes:
        archiving = Archiving(control, store, spool, say)
        try:
            with control.locks.hold([ARCHIVING], owner=f"archiver {instance}") as still_held:
                say(f"{instance} archives the masters' binary logs into {store.url}")
                while passes is None or done < passes:
                    still_held()
                    archiving.archive_pass()
                    done += 1
                    time.sleep(interval)
        except HostsBusy:
            done += 1  # another process archives (or ZooKeeper cannot be reached)
            time.sleep(interval)
        except ShardStoreError as exc:
            say(f"{instance} stood down: {exc}")
            time.sleep(interval)
        finally:
            archiving.stop()
