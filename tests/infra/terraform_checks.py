"""Static checks of a Terraform tree (infra/terraform), as plain functions of a directory.

Each check returns a list of problems (empty: fine), each naming its file or module
directory, so the tests can run the same checks on the real tree and on a broken copy.
References are found in the parsed HCL (python-hcl2 keeps expressions as "${...}"
strings), so comments never count as uses.
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

import hcl2

# The root outputs toolkit/inventory.py reads (the deploy contract).
CONTRACT_OUTPUTS = frozenset(
    {
        "environment",
        "region",
        "site_url",
        "alb_dns_name",
        "media_bucket",
        "media_domain",
        "artifacts_bucket",
        "backup_store",
        "backup_kms_key",
        "ssm_prefix",
        "mysql_pairs",
        "mysql_spares",
        "redis_pairs",
        "broker",
        "memcached_pools",
        "zookeeper",
        "control_database",
        "fenced_security_group",
    }
)

# Arguments of a module block that are Terraform's, not the module's variables.
META_ARGUMENTS = frozenset({"source", "version", "count", "for_each", "providers", "depends_on"})

# Blocks naming resource addresses (module.hosts.aws_instance.this), not values: their
# module.x.y is no use of an output.
ADDRESS_BLOCKS = frozenset({"moved", "import", "removed"})

_NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
_VAR_REF = re.compile(rf"\bvar\.({_NAME})")
_LOCAL_REF = re.compile(rf"\blocal\.({_NAME})")
_MODULE_REF = re.compile(rf"\bmodule\.({_NAME})(?:\[[^\]]*\])?\.({_NAME})")


def tf_files(root: Path) -> list[Path]:
    """Every .tf file under root, outside Terraform's own .terraform directories."""
    return sorted(p for p in root.rglob("*.tf") if ".terraform" not in p.parts)


def parse_error(path: Path) -> str | None:
    """Why python-hcl2 cannot parse the file, or None."""
    try:
        with path.open() as f:
            hcl2.load(f)
    except Exception as error:  # noqa: BLE001 - the parser raises several types
        return f"{path}: {type(error).__name__}: {error}"
    return None


def parse_errors(root: Path) -> list[str]:
    return [error for path in tf_files(root) if (error := parse_error(path))]


def _unquote(value: Any) -> Any:
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def _blocks(parsed: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    """Labelled blocks of one kind (variable, output, module) by unquoted name."""
    found: dict[str, dict[str, Any]] = {}
    for doc in parsed:
        for block in doc.get(kind, []):
            for name, body in block.items():
                found[_unquote(name)] = body
    return found


@lru_cache(maxsize=512)
def _parse(path: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    """Parsing is slow and modules are read once per call of them: cache by version."""
    with path.open() as f:
        return hcl2.load(f)


def load_directory(directory: Path) -> list[dict[str, Any]]:
    """The parsed .tf files of one module directory (not its subdirectories)."""
    parsed = []
    for path in sorted(directory.glob("*.tf")):
        stat = path.stat()
        parsed.append(_parse(path, stat.st_mtime_ns, stat.st_size))
    return parsed


def module_directories(root: Path) -> list[Path]:
    return sorted({path.parent for path in tf_files(root)})


def _declared_locals(parsed: list[dict[str, Any]]) -> set[str]:
    return {
        name
        for doc in parsed
        for block in doc.get("locals", [])
        for name in block
        if not name.startswith("__")
    }


def _local_source(directory: Path, body: dict[str, Any]) -> Path | None:
    source = _unquote(body.get("source", ""))
    if isinstance(source, str) and source.startswith(("./", "../")):
        return (directory / source).resolve()
    return None


def wiring_problems(root: Path) -> list[str]:
    """Undeclared var./local. uses, missing module outputs, wrong module arguments."""
    problems = []
    for directory in module_directories(root):
        where = directory.relative_to(root) if directory != root else Path(".")
        parsed = load_directory(directory)
        text = json.dumps([{k: v for k, v in d.items() if k not in ADDRESS_BLOCKS} for d in parsed])
        variables = set(_blocks(parsed, "variable"))
        for name in sorted(set(_VAR_REF.findall(text)) - variables):
            problems.append(f"{where}: var.{name} is used but not declared")
        for name in sorted(set(_LOCAL_REF.findall(text)) - _declared_locals(parsed)):
            problems.append(f"{where}: local.{name} is used but not defined")

        calls = _blocks(parsed, "module")
        for call, body in calls.items():
            source = _local_source(directory, body)
            if source is None or not source.is_dir():
                problems.append(f"{where}: module {call} has no local source directory")
                continue
            callee = load_directory(source)
            callee_vars = _blocks(callee, "variable")
            passed = {name for name in body if not name.startswith("__")} - META_ARGUMENTS
            required = {name for name, var in callee_vars.items() if "default" not in var}
            for name in sorted(required - passed):
                problems.append(f"{where}: module {call} does not pass required {name}")
            for name in sorted(passed - set(callee_vars)):
                problems.append(f"{where}: module {call} passes {name}, not a variable of it")
        for call, output in sorted(set(_MODULE_REF.findall(text))):
            if call not in calls:
                problems.append(f"{where}: module.{call}.{output} refers to no module call")
                continue
            source = _local_source(directory, calls[call])
            if (
                source
                and source.is_dir()
                and output not in _blocks(load_directory(source), "output")
            ):
                problems.append(
                    f"{where}: module.{call}.{output} is not an output of {source.name}"
                )
    return problems


def root_outputs(root: Path) -> set[str]:
    return set(_blocks(load_directory(root), "output"))


def _resources(parsed: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    found = {}
    for doc in parsed:
        for block in doc.get("resource", []):
            for resource_type, named in block.items():
                if _unquote(resource_type) != kind:
                    continue
                for name, body in named.items():
                    if not name.startswith("__"):
                        found[_unquote(name)] = body
    return found


def _has_role(tags: Any) -> bool:
    return isinstance(tags, dict) and bool(tags.get("Role"))


def tag_problems(root: Path) -> list[str]:
    """Instances without a Role tag; a provider without Project/Environment default_tags."""
    problems = []
    for directory in module_directories(root):
        where = directory.relative_to(root) if directory != root else Path(".")
        parsed = load_directory(directory)
        for name, body in _resources(parsed, "aws_instance").items():
            if not _has_role(body.get("tags")):
                problems.append(f"{where}: aws_instance.{name} has no Role tag")
        for name, body in _resources(parsed, "aws_launch_template").items():
            specs = body.get("tag_specifications", [])
            if not any(
                _unquote(spec.get("resource_type")) == "instance" and _has_role(spec.get("tags"))
                for spec in specs
            ):
                problems.append(f"{where}: aws_launch_template.{name} tags no instance with a Role")

    providers = [
        body
        for doc in load_directory(root)
        for block in doc.get("provider", [])
        for name, body in block.items()
        if _unquote(name) == "aws"
    ]
    if not providers:
        problems.append("root: no aws provider block")
    for provider in providers:
        default_tags = provider.get("default_tags", [{}])[0].get("tags", {})
        for key in ("Project", "Environment"):
            if key not in default_tags:
                problems.append(f"root: the aws provider's default_tags lack {key}")
    return problems


def checkov_report(checkov: Path, root: Path) -> dict[str, Any]:
    """Run checkov over root with its .checkov.yaml; returns the JSON report's dict."""
    command = [
        str(checkov),
        "--directory",
        str(root),
        "--framework",
        "terraform",
        "--config-file",
        str(root / ".checkov.yaml"),
        "--download-external-modules",
        "false",
        "--skip-download",
        "--output",
        "json",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    report = json.loads(run.stdout)
    if isinstance(report, list):  # one entry per framework when several ran
        (report,) = [r for r in report if r.get("check_type") == "terraform"]
    return report


def checkov_failures(report: dict[str, Any]) -> list[str]:
    return [
        f"{check['check_id']} {check['resource']} ({check['file_path']}): {check['check_name']}"
        for check in report.get("results", {}).get("failed_checks", [])
    ]
