"""The instance roles' policies as Terraform writes them (infra/terraform/modules/iam), read
from the HCL and rendered as the JSON documents AWS evaluates, so that a test can load them
into an IAM engine (moto's) and make the site's S3 calls under them.

Only the statements that name an S3 action are rendered. The others grant actions of
other services only, so leaving them out changes no S3 answer, and their resources are
ARNs built from data sources that only a plan knows. A ``for_each`` or a value of a form
this reader does not know is an error, never a statement silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tests.infra import terraform_checks as checks

IAM = Path(__file__).resolve().parents[2] / "infra" / "terraform" / "modules" / "iam"

_ONLY_IF = r"^\$\{(.+) \? \[1\] : \[\]\}$"
_KEY_IS = re.compile(r'^each\.key == "(\w+)"$')
_KEY_IN_LIST = re.compile(r"^contains\(\[(.*)\], each\.key\)$")
_KEY_IN_LOCAL = re.compile(r"^contains\(local\.(\w+), each\.key\)$")
_VAR = re.compile(r"\$\{var\.(\w+)\}")


def role_policy(kind: str, variables: Mapping[str, str]) -> dict[str, Any]:
    """The S3 statements of role ``kind``'s policy (``web``, ``worker``...), as a policy
    document; ``variables``: the module's variables their resources name, by name."""
    parsed = checks.load_directory(IAM)
    statements = []
    for for_each, statement in _statements(parsed):
        actions = [checks._unquote(action) for action in statement["actions"]]
        if not any(action.startswith("s3:") for action in actions):
            continue
        if for_each is not None and not _applies(for_each, kind, parsed):
            continue
        statements.append(_rendered(statement, actions, variables))
    return {"Version": "2012-10-17", "Statement": statements}


def _statements(parsed: list[dict[str, Any]]) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """Each statement of the roles' policy document with its ``for_each`` (None: always)."""
    for doc in parsed:
        for block in doc.get("data", []):
            body = block.get('"aws_iam_policy_document"', {}).get('"this"')
            if body is None:
                continue
            for statement in body.get("statement", []):
                yield None, statement
            for dynamic in body.get("dynamic", []):
                for generated in dynamic.values():
                    (content,) = generated["content"]
                    yield generated["for_each"], content


def _applies(for_each: str, kind: str, parsed: list[dict[str, Any]]) -> bool:
    """Whether a dynamic statement's ``for_each`` (``cond ? [1] : []``) yields it for ``kind``."""
    only_if = re.match(_ONLY_IF, for_each)
    condition = only_if.group(1) if only_if else ""
    if match := _KEY_IS.match(condition):
        return kind == match.group(1)
    if match := _KEY_IN_LIST.match(condition):
        return kind in re.findall(r'"(\w+)"', match.group(1))
    if match := _KEY_IN_LOCAL.match(condition):
        (kinds,) = [b[match.group(1)] for doc in parsed for b in doc.get("locals", []) if match.group(1) in b]  # fmt: skip
        return kind in [checks._unquote(k) for k in kinds]
    raise ValueError(f"a for_each this reader cannot evaluate: {for_each!r}")


def _rendered(
    statement: dict[str, Any], actions: list[str], variables: Mapping[str, str]
) -> dict[str, Any]:
    unknown = set(statement) - {"sid", "effect", "actions", "resources", "__is_block__"}
    if unknown:
        raise ValueError(f"statement {statement.get('sid')}: cannot render {sorted(unknown)}")
    rendered: dict[str, Any] = {
        "Effect": checks._unquote(statement.get("effect", '"Allow"')),
        "Action": actions,
        "Resource": [_value(resource, variables) for resource in statement["resources"]],
    }
    if "sid" in statement:
        rendered = {"Sid": checks._unquote(statement["sid"]), **rendered}
    return rendered


def _value(expression: str, variables: Mapping[str, str]) -> str:
    text = checks._unquote(expression)
    text = _VAR.sub(lambda match: variables[match.group(1)], text)
    if "${" in text:
        raise ValueError(f"a value this reader cannot render: {expression!r}")
    return text
