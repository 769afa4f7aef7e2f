"""The two builds the comparison tests read, as tests/bench/conftest.py makes them: the cast
of pinners, boards and pins (pinboard's dicts, by name), the ORM build's database and
subprocess, and pinboard's answer in this process."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
SHARDS = 4
ORM_DATABASE = "orm"
PASSWORD = "plum-orchard-42"


@dataclass
class Cast:
    """Who and what the tests read, by name: pinners, boards and pins are pinboard's dicts."""

    users: dict[str, dict[str, Any]]
    boards: dict[str, dict[str, Any]]
    pins: dict[str, dict[str, Any]]
    tokens: dict[str, str]
    deleted_pin: int

    def id(self, name: str) -> str:
        for kind in (self.users, self.boards, self.pins):
            if name in kind:
                return str(kind[name]["id"])
        raise KeyError(name)


@dataclass
class OrmBuild:
    """The ORM build's database, filled from pinboard's shards; requests go to a subprocess."""

    env: dict[str, str]
    mysql: dict[str, Any]  # MySQLdb.connect's arguments
    copied: dict[str, int]

    def fetch(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        done = subprocess.run(
            [sys.executable, "-m", "bench.compare.orm", "fetch", "--requests", "-"],
            cwd=ROOT,
            env=self.env,
            input=json.dumps(requests),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def get(self, path: str, token: str | None = None) -> dict[str, Any]:
        return self.fetch([{"path": path, "token": token}])[0]


def pinboard(method: str, path: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
    """pinboard's answer, in this process: (status, JSON or HTML)."""
    headers = {"Authorization": f"Token {token}"} if token else {}
    content = {"data": json.dumps(body), "content_type": "application/json"} if body else {}
    response = Client().generic(method, path, headers=headers, **content)
    if response.get("Content-Type") == "application/json":
        return response.status_code, response.json()
    return response.status_code, response.content.decode()
