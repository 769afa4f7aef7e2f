"""Where backups are kept, named by a URL: ``file:///var/backups/pinboard`` (a directory:
the local cluster's, the tests') or ``s3://bucket/prefix`` (the AWS deploy's bucket, each
object encrypted with its KMS key). A backup is its parts and, written last, its manifest:
a backup without one was never finished."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..exceptions import ShardStoreError


class BackupStoreError(ShardStoreError):
    """The store cannot be reached, or has no such object."""


class BackupStore(Protocol):
    url: str

    def put(self, key: str, data: bytes) -> None:
        """Keep ``data`` under ``key`` (a ``/``-separated path)."""

    def get(self, key: str) -> bytes:
        """What ``key`` holds; BackupStoreError if nothing."""

    def keys(self, prefix: str) -> list[str]:
        """Every key under ``prefix``, sorted."""


class DirectoryStore:
    """Backups as files under a directory of this machine."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.url = f"file://{self.root}"

    def _path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise BackupStoreError(f"{key!r} is not a key of {self.url}")
        return path

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(data)
        os.replace(partial, path)  # a key holds all of its data or nothing

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except OSError as exc:
            raise BackupStoreError(f"{self.url}/{key}: {exc.strerror or exc}") from None

    def keys(self, prefix: str) -> list[str]:
        base = self.root.resolve()
        return sorted(
            str(path.relative_to(base))
            for path in (base / prefix).rglob("*")
            if path.is_file() and not path.name.endswith(".partial")
        )

    def delete(self, keys: list[str]) -> None:
        """Remove ``keys`` and the directories they leave empty (retention: ``prune``; a
        bucket's own lifecycle rule expires its objects instead)."""
        for key in keys:
            path = self._path(key)
            path.unlink(missing_ok=True)
            for parent in path.parents:
                if parent == self.root.resolve() or any(parent.iterdir()):
                    break
                parent.rmdir()


class S3Store:
    """Backups as objects of an S3 bucket, under a prefix; each put is a multipart upload
    past boto3's threshold, encrypted with ``kms_key`` when one is given (SSE-KMS)."""

    def __init__(self, bucket: str, prefix: str, client: Any, kms_key: str | None = None) -> None:
        self.bucket, self.prefix, self.client, self.kms_key = bucket, prefix.strip("/"), client, kms_key  # fmt: skip
        self.url = f"s3://{bucket}/{self.prefix}".rstrip("/")

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def put(self, key: str, data: bytes) -> None:
        extra = {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": self.kms_key} if self.kms_key else {}  # fmt: skip
        self._call(self.client.upload_fileobj, io.BytesIO(data), self.bucket, self._key(key), ExtraArgs=extra)  # fmt: skip

    def get(self, key: str) -> bytes:
        answer = self._call(self.client.get_object, Bucket=self.bucket, Key=self._key(key))
        return bytes(answer["Body"].read())

    def keys(self, prefix: str) -> list[str]:
        found: list[str] = []
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self._key(prefix))  # fmt: skip
        for page in self._call(list, pages):
            found += [item["Key"][len(self._key("")) :] for item in page.get("Contents", [])]
        return sorted(found)

    def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return method(*args, **kwargs)
        except (BotoCoreError, ClientError) as exc:
            raise BackupStoreError(f"{self.url}: {exc}") from None


def backup_store(url: str | None, kms_key: str | None = None) -> BackupStore | None:
    """The store ``url`` names, or None when none is set."""
    return open_store(url, kms_key=kms_key) if url else None


def open_store(url: str, *, endpoint_url: str | None = None, kms_key: str | None = None) -> BackupStore:  # fmt: skip
    """The store ``url`` names (``endpoint_url``: an S3 API server other than AWS's)."""
    parts = urlsplit(url)
    if parts.scheme == "file" and parts.path:
        return DirectoryStore(Path(parts.path))
    if parts.scheme == "s3" and parts.netloc:
        import boto3

        client = boto3.client("s3", endpoint_url=endpoint_url)
        return S3Store(parts.netloc, parts.path, client, kms_key)
    raise BackupStoreError(f"{url!r} names no backup store: file:///DIRECTORY or s3://BUCKET/PREFIX")  # fmt: skip
