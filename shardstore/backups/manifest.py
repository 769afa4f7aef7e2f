"""A backup's manifest: what it holds and how to check it. Kept as ``HOST/NAME/manifest.json``
beside the parts, and written last (a backup with no manifest was never finished)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from .store import BackupStore, BackupStoreError

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Part:
    key: str
    size: int  # bytes
    sha256: str


@dataclass(frozen=True)
class Manifest:
    """One backup of one host: the shards it held (``ranges``, as the map says them), the
    GTID position it is consistent at (each replication domain's last transaction), when it
    began and ended (Unix seconds), its compressed size in bytes, its parts in order, the
    tool."""

    name: str  # when it began, UTC: 20261129T050312Z
    host: str
    ranges: str
    gtid: str
    started: float
    ended: float
    size: int
    tool: str
    parts: list[Part] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.host}/{self.name}/{MANIFEST}"

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), indent=2, sort_keys=True).encode()

    @classmethod
    def from_json(cls, text: bytes) -> Manifest:
        data = json.loads(text)
        return cls(**{**data, "parts": [Part(**p) for p in data["parts"]]})


def manifests(store: BackupStore, host: str | None = None) -> list[Manifest]:
    """The finished backups in ``store`` (of ``host``), oldest first."""
    found = []
    for key in store.keys(f"{host}/" if host else ""):
        if key.endswith(f"/{MANIFEST}"):
            try:
                found.append(Manifest.from_json(store.get(key)))
            except (BackupStoreError, ValueError, TypeError, KeyError):
                continue  # not a manifest of ours: never restored from
    return sorted(found, key=lambda m: (m.started, m.host))
