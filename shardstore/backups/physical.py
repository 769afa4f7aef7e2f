"""Physical backups of a MariaDB host with mariadb-backup (as pinterest/mysql_utils' were
with xtrabackup): ``take`` streams one (mbstream), compressed (zstd), in parts of
``PART_BYTES`` into a store, each with its sha256, and its manifest last; ``unpack`` checks
every part against the manifest, extracts them and prepares the data directory, ready for a
server to start on.

mariadb-backup copies the server's data files: it runs on the host's own machine (the
deploy's timer on each shard host; every server of the local cluster and of the tests is on
this one). Its consistent point is its ``BACKUP STAGE BLOCK_COMMIT``: the GTID position it
prints there is the manifest's.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ..control.mysql_hosts import endpoint
from ..exceptions import ShardStoreError
from .manifest import Manifest, Part
from .store import BackupStore

#: The largest part, compressed: one is held in memory at a time.
PART_BYTES = 64 * 1024 * 1024
#: What mariadb-backup prints at its consistent point.
_POSITION = re.compile(r"GTID of the last change '([^']*)'")


class BackupError(ShardStoreError):
    """A backup or its restore failed; nothing usable was made."""


def take(
    store: BackupStore,
    *,
    host: str,
    address: str,
    login: tuple[str, str],
    ranges: str,
    part_bytes: int = PART_BYTES,
    say: Callable[[str], None] = lambda line: None,
) -> Manifest:
    """Back ``host`` up into ``store``; its manifest once every part is kept."""
    started = time.time()
    name = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started))
    server, port = endpoint(address)
    with tempfile.TemporaryDirectory(prefix="pinboard-backup-") as scratch:
        options = Path(scratch) / "login.cnf"  # the password never on a command line
        options.write_text(f"[mariadb-backup]\nuser={login[0]}\npassword={login[1]}\n")
        options.chmod(0o600)
        log = Path(scratch) / "mariadb-backup.log"
        with log.open("wb") as errors:
            backup = subprocess.Popen(
                ["mariadb-backup", f"--defaults-extra-file={options}", "--backup", "--stream=mbstream",
                 f"--host={server}", f"--port={port}", f"--target-dir={scratch}"],
                stdout=subprocess.PIPE, stderr=errors,
            )  # fmt: skip
            assert backup.stdout is not None
            zstd = subprocess.Popen(["zstd", "-q", "-c", "-T0"], stdin=backup.stdout, stdout=subprocess.PIPE)  # fmt: skip
            backup.stdout.close()  # zstd's now: mariadb-backup sees a broken pipe if zstd dies
            assert zstd.stdout is not None
            parts: list[Part] = []
            while chunk := zstd.stdout.read(part_bytes):
                key = f"{host}/{name}/part-{len(parts):05d}.mbstream.zst"
                store.put(key, chunk)
                parts.append(Part(key, len(chunk), hashlib.sha256(chunk).hexdigest()))
                say(f"{key}: {len(chunk) / 1e6:.1f} MB")
            zstd.stdout.close()
            zstd.wait()
            backup.wait()
        said = log.read_text(errors="replace")
    position = _POSITION.search(said)
    if backup.returncode != 0 or zstd.returncode != 0 or position is None:
        tail = " ".join(said.strip().splitlines()[-3:]) or "no output"
        raise BackupError(f"the backup of {host} failed (mariadb-backup {backup.returncode}, zstd {zstd.returncode}): {tail}")  # fmt: skip
    manifest = Manifest(
        name, host, ranges, position.group(1), started, time.time(),
        sum(p.size for p in parts), _version(), parts,
    )  # fmt: skip
    store.put(manifest.key, manifest.to_json())
    return manifest


def unpack(store: BackupStore, manifest: Manifest, target: Path) -> None:
    """The backup's data directory in ``target`` (empty or absent), prepared: every part
    checked against its sha256 first, so a corrupt one changes nothing."""
    if target.exists() and any(target.iterdir()):
        raise BackupError(f"{target} is not empty: a backup is unpacked into an empty directory")
    with tempfile.TemporaryDirectory(prefix="pinboard-restore-") as scratch:
        stream = Path(scratch) / "backup.mbstream.zst"
        with stream.open("wb") as out:
            for part in manifest.parts:
                chunk = store.get(part.key)
                if len(chunk) != part.size or hashlib.sha256(chunk).hexdigest() != part.sha256:
                    raise BackupError(f"{part.key} does not match its manifest's sha256: the backup is corrupt")  # fmt: skip
                out.write(chunk)
        target.mkdir(parents=True, exist_ok=True)
        with open(Path(scratch) / "errors", "wb+") as errors:
            unzstd = subprocess.Popen(["zstd", "-q", "-d", "-c", str(stream)], stdout=subprocess.PIPE, stderr=errors)  # fmt: skip
            extract = subprocess.Popen(["mbstream", "-x", "-C", str(target)], stdin=unzstd.stdout, stderr=errors)  # fmt: skip
            assert unzstd.stdout is not None
            unzstd.stdout.close()  # mbstream's now
            extract.wait()
            unzstd.wait()
            errors.seek(0)
            said = errors.read().decode(errors="replace").strip()
    if unzstd.returncode != 0 or extract.returncode != 0:
        raise BackupError(f"{manifest.key} does not extract: {said or 'no output'}")
    prepared = subprocess.run(["mariadb-backup", "--prepare", f"--target-dir={target}"], capture_output=True, text=True, check=False)  # fmt: skip
    if prepared.returncode != 0:
        raise BackupError(f"{manifest.key} does not prepare: {prepared.stderr.strip().splitlines()[-1:]}")  # fmt: skip


def _version() -> str:
    done = subprocess.run(["mariadb-backup", "--version"], capture_output=True, text=True, check=False)  # fmt: skip
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else "mariadb-backup"  # fmt: skip
