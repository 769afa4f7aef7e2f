"""The public surface: what ``import shardstore`` offers, and that it needs no Django."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import shardstore

PACKAGE = Path(shardstore.__file__).parent


def test_all_names_exist() -> None:
    assert shardstore.__all__, "__all__ is empty"
    missing = [name for name in shardstore.__all__ if not hasattr(shardstore, name)]
    assert missing == []
    assert len(set(shardstore.__all__)) == len(shardstore.__all__)
    for name in ("Store", "Topology", "compose", "decompose", "InvalidId", "WrongType",
                 "UnknownShard", "ShardUnavailable", "DuplicateKey", "init_shards"):  # fmt: skip
        assert name in shardstore.__all__


def test_errors_share_one_base() -> None:
    for name in shardstore.__all__:
        value = getattr(shardstore, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, shardstore.ShardStoreError), name


def test_importing_shardstore_loads_no_django() -> None:
    code = (
        "import importlib, json, pkgutil, sys\n"
        "import shardstore\n"
        "after_package = sorted(m for m in sys.modules if m.split('.')[0] == 'django')\n"
        "for info in pkgutil.walk_packages(shardstore.__path__, 'shardstore.'):\n"
        "    if info.name != 'shardstore.__main__':\n"
        "        importlib.import_module(info.name)\n"
        "after_all = sorted(m for m in sys.modules if m.split('.')[0] == 'django')\n"
        "print(json.dumps([after_package, after_all]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    after_package, after_all = json.loads(result.stdout.strip().splitlines()[-1])
    assert after_package == []
    assert after_all == []


def test_no_django_import_in_the_source() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [
                f"{path.name}: {n}" for n in names if n.split(".")[0] in ("django", "pinboard")
            ]
    assert offenders == []
