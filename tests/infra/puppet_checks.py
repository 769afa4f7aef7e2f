"""Checks of a Puppet tree (infra/puppet or a copy of it), run with Debian's puppet and
puppet-lint: validation, EPP rendering and masterless noop runs.

Each check takes the tree's directory, so the tests can run them on a deliberately broken
copy too. Every puppet command gets its own configuration and state directories: nothing
is read from or written to the machine's /etc/puppet or /var/lib/puppet.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUPPET_DIR = ROOT / "infra" / "puppet"
EXAMPLE_DEPLOY = PUPPET_DIR / "data" / "example-deploy.yaml"

# Facter cannot read /proc/1/environ in some containers and says so as "Error: Facter:";
# that is the machine, not the manifests, and it does not change puppet's exit status.
_FACTER_NOISE = re.compile(r"^Error: Facter: ")


def missing_tool() -> str | None:
    """The first of puppet and puppet-lint that is not installed, else None."""
    for tool in ("puppet", "puppet-lint"):
        if shutil.which(tool) is None:
            return tool
    return None


def manifests(tree: Path) -> list[Path]:
    return sorted(tree.rglob("*.pp"))


def templates(tree: Path) -> list[Path]:
    return sorted(tree.rglob("*.epp"))


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    @property
    def errors(self) -> list[str]:
        """Puppet's error lines, without Facter's complaints about the machine."""
        return [
            line
            for line in self.output.splitlines()
            if line.startswith("Error:") and not _FACTER_NOISE.match(line)
        ]


def _puppet(args: list[str], state: Path, env: dict[str, str] | None = None) -> Result:
    settings = [f"--{name}={state / name}" for name in ("confdir", "vardir", "codedir", "logdir")]
    settings.append(f"--rundir={state / 'run'}")
    result = subprocess.run(
        ["puppet", *args, *settings, "--color=false"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return Result(result.returncode, result.stdout, result.stderr)


def _in_scratch(args: list[str], env: dict[str, str] | None = None) -> Result:
    with tempfile.TemporaryDirectory(prefix="puppet-") as state:
        return _puppet(args, Path(state), env)


@dataclass
class Validation:
    """One check over every file of a tree: its exit status and its complaints per file."""

    returncode: int
    output: str
    by_file: dict[Path, list[str]]

    def complaints(self, path: Path) -> list[str]:
        return self.by_file.get(path.resolve(), [])


_FILE_IN_ERROR = re.compile(r"\(file: ([^,)]+)")


def _by_file(lines: list[str], pattern: re.Pattern[str]) -> dict[Path, list[str]]:
    found: dict[Path, list[str]] = {}
    for line in lines:
        match = pattern.search(line)
        if match:
            found.setdefault(Path(match.group(1)).resolve(), []).append(line)
    return found


def validate_manifests(tree: Path) -> Validation:
    """``puppet parser validate`` over every manifest at once (a puppet start takes seconds);
    each error names its file."""
    result = _in_scratch(["parser", "validate", *map(str, manifests(tree))])
    return Validation(result.returncode, result.output, _by_file(result.errors, _FILE_IN_ERROR))


def validate_templates(tree: Path) -> Validation:
    """``puppet epp validate`` over every template, going on after a broken one."""
    result = _in_scratch(["epp", "validate", "--continue_on_error", *map(str, templates(tree))])
    return Validation(result.returncode, result.output, _by_file(result.errors, _FILE_IN_ERROR))


def lint(tree: Path) -> Validation:
    """puppet-lint over every manifest, with the tree's .puppet-lint.rc if it has one; each
    complaint starts with its file's path."""
    rc = tree / ".puppet-lint.rc"
    options = [f"--config={rc}"] if rc.exists() else []
    paths = [str(path) for path in manifests(tree)]
    result = subprocess.run(
        ["puppet-lint", "--fail-on-warnings", *options, *paths],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    prefix = re.compile(r"^(\S+\.pp) - ")
    by_file = _by_file(output.splitlines(), prefix)
    return Validation(result.returncode, output, by_file)


def puppet_literal(value: object) -> str:
    """A Python value (str, int, bool, list, dict) as a Puppet literal."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, list):
        return "[" + ", ".join(puppet_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{puppet_literal(k)} => {puppet_literal(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    raise TypeError(f"no Puppet literal for {value!r}")


def render(template: Path, values: dict[str, object]) -> str:
    """The template rendered with these parameters; AssertionError with puppet's words."""
    result = _in_scratch(["epp", "render", str(template), "--values", puppet_literal(values)])
    assert result.returncode == 0 and not result.errors, result.output
    return result.stdout


@dataclass
class NoopRun(Result):
    resources: set[str]
    """The catalog's resources, as Puppet writes them: ``service[nginx]``."""
    catalog: dict[str, dict[str, object]]
    """Each resource's parameters (a file's content, a service's ensure), by the same name."""


def noop_apply(
    tree: Path, state: Path, facts: dict[str, str], deploy_data: Path = EXAMPLE_DEPLOY
) -> NoopRun:
    """``puppet apply --noop`` of the tree's site.pp, masterless, with these facts (as
    FACTER_ variables) and ``deploy_data`` as the generated Hiera file. The compiled
    catalog is kept (as JSON, in ``state``) and read back."""
    env = {f"FACTER_{name}": value for name, value in facts.items()}
    env["FACTER_pinboard_deploy_data"] = str(deploy_data)
    result = _puppet(
        [
            "apply",
            "--noop",
            "--detailed-exitcodes",
            "--write_catalog_summary",
            "--catalog_cache_terminus=json",
            f"--modulepath={tree / 'modules'}",
            f"--hiera_config={tree / 'hiera.yaml'}",
            str(tree / "manifests" / "site.pp"),
        ],
        state,
        env,
    )
    summary = state / "vardir" / "state" / "resources.txt"
    resources = set(summary.read_text().splitlines()) if summary.exists() else set()
    catalog = {}
    for cached in (state / "vardir" / "client_data" / "catalog").glob("*.json"):
        for resource in json.loads(cached.read_text())["resources"]:
            name = f"{resource['type'].lower()}[{resource['title']}]"
            catalog[name] = resource.get("parameters", {})
    return NoopRun(result.returncode, result.stdout, result.stderr, resources, catalog)
