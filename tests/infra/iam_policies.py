"""The instance roles' policies as Terraform writes them (infra/terraform/modules/iam), read
from the HCL and rendered as the JSON documents AWS evaluates, so that a test can load them
into an IAM engine (moto's) and make the site's S3 calls under them, or ask ``evaluate``
what AWS would answer to one request.

Each role has two policy documents: ``this`` (images, artifacts, parameters, the fence...)
and, on the roles that use the backup store, ``backups``. Only the statements that name an
S3 action are rendered. The others grant actions of other services only, so leaving them
out changes no S3 answer, and their resources are ARNs built from data sources that only a
plan knows. The backup bucket's own policy (modules/backups) is rendered whole. A
``for_each`` or a value of a form this reader does not know is an error, never a statement
silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.infra import terraform_checks as checks

MODULES = Path(__file__).resolve().parents[2] / "infra" / "terraform" / "modules"
IAM = MODULES / "iam"
BACKUPS = MODULES / "backups"

#: The policy documents of modules/iam: the roles' trust policy and their two policies.
DOCUMENTS = frozenset({"assume", "this", "backups"})

_ONLY_IF = r"^\$\{(.+) \? \[1\] : \[\]\}$"
_KEY_IS = re.compile(r'^each\.key == "(\w+)"$')
_KEY_IN_LIST = re.compile(r"^contains\(\[(.*)\], each\.key\)$")
_KEY_IN_LOCAL = re.compile(r"^contains\(local\.(\w+), each\.key\)$")
_EACH_OF_LOCAL = re.compile(r"^\$\{(?:toset\()?local\.(\w+)\)?\}$")
_EXPRESSION = re.compile(r"\$\{([^{}]+)\}")

Values = Mapping[str, str | Sequence[str]]


def role_policy(kind: str, variables: Mapping[str, str], document: str = "this") -> dict[str, Any]:
    """The S3 statements of role ``kind``'s policy ``document`` (``web``, ``worker``...), as
    a policy document (none: the role has no such policy); ``variables``: the module's
    variables their resources name, by name."""
    parsed = checks.load_directory(IAM)
    body = _document(parsed, document)
    if kind not in _kinds(body, parsed):
        return {"Version": "2012-10-17", "Statement": []}
    values = {f"var.{name}": value for name, value in variables.items()}
    statements = []
    for for_each, statement in _statements(body):
        actions = [checks._unquote(action) for action in statement["actions"]]
        if not any(action.startswith("s3:") for action in actions):
            continue
        if for_each is not None and not _applies(for_each, kind, parsed):
            continue
        statements.append(_rendered(statement, actions, values))
    return {"Version": "2012-10-17", "Statement": statements}


def bucket_policy(values: Values) -> dict[str, Any]:
    """The backup bucket's policy (modules/backups), every statement; ``values``: what the
    expressions it names stand for, by their text (``aws_s3_bucket.this.arn``)."""
    body = _document(checks.load_directory(BACKUPS), "bucket")
    statements = []
    for for_each, statement in _statements(body):
        if for_each is not None:
            raise ValueError(f"a dynamic statement this reader cannot evaluate: {for_each!r}")
        actions = [checks._unquote(action) for action in statement["actions"]]
        statements.append(_rendered(statement, actions, values))
    return {"Version": "2012-10-17", "Statement": statements}


def documents() -> set[str]:
    """The names of modules/iam's policy documents."""
    return {
        checks._unquote(name)
        for doc in checks.load_directory(IAM)
        for block in doc.get("data", [])
        for name in block.get('"aws_iam_policy_document"', {})
    }


def _document(parsed: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for doc in parsed:
        for block in doc.get("data", []):
            body = block.get('"aws_iam_policy_document"', {}).get(f'"{name}"')
            if body is not None:
                return dict(body)
    raise ValueError(f"no policy document {name!r}")


def _local(parsed: list[dict[str, Any]], name: str) -> Any:
    (value,) = [b[name] for doc in parsed for b in doc.get("locals", []) if name in b]
    return value


def _kinds(body: dict[str, Any], parsed: list[dict[str, Any]]) -> list[str]:
    """The roles a document is made for: its ``for_each`` over a local (a map's keys, a
    list's items)."""
    match = _EACH_OF_LOCAL.match(str(body.get("for_each", "")))
    if match is None:
        raise ValueError(f"a document's for_each this reader cannot evaluate: {body.get('for_each')!r}")  # fmt: skip
    value = _local(parsed, match.group(1))
    return [checks._unquote(kind) for kind in value if not str(kind).startswith("__")]


def _statements(body: dict[str, Any]) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """Each statement of a policy document with its ``for_each`` (None: always)."""
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
        return kind in [checks._unquote(k) for k in _local(parsed, match.group(1))]
    raise ValueError(f"a for_each this reader cannot evaluate: {for_each!r}")


def _rendered(statement: dict[str, Any], actions: list[str], values: Values) -> dict[str, Any]:
    known = {"sid", "effect", "actions", "resources", "condition", "principals", "__is_block__"}
    unknown = set(statement) - known
    if unknown:
        raise ValueError(f"statement {statement.get('sid')}: cannot render {sorted(unknown)}")
    rendered: dict[str, Any] = {
        "Effect": checks._unquote(statement.get("effect", '"Allow"')),
        "Action": actions,
        "Resource": _values(statement["resources"], values),
    }
    if "sid" in statement:
        rendered = {"Sid": checks._unquote(statement["sid"]), **rendered}
    if "principals" in statement:
        rendered["Principal"] = _principal(statement["principals"], values)
    if "condition" in statement:
        conditions: dict[str, dict[str, list[str]]] = {}
        for condition in statement["condition"]:
            test = checks._unquote(condition["test"])
            variable = checks._unquote(condition["variable"])
            conditions.setdefault(test, {})[variable] = _values(condition["values"], values)
        rendered["Condition"] = conditions
    return rendered


def _principal(principals: list[dict[str, Any]], values: Values) -> Any:
    found: dict[str, list[str]] = {}
    for principal in principals:
        kind = checks._unquote(principal["type"])
        found.setdefault(kind, []).extend(_values(principal["identifiers"], values))
    if found == {"*": ["*"]}:
        return "*"
    return found


def _values(expressions: str | list[str], values: Values) -> list[str]:
    """A list of values, each rendered; an expression that stands for a list (a local
    holding several ARNs) adds each of its items."""
    items = [expressions] if isinstance(expressions, str) else expressions
    rendered: list[str] = []
    for item in items:
        whole = _EXPRESSION.fullmatch(str(item))
        if whole and not isinstance(values.get(whole.group(1)), str | None):
            rendered.extend(values[whole.group(1)])
        else:
            rendered.append(_value(item, values))
    return rendered


def _value(expression: str, values: Values) -> str:
    text = checks._unquote(expression)

    def substituted(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        if not isinstance(value, str):
            raise ValueError(f"a value this reader cannot render: {expression!r}")
        return value

    text = _EXPRESSION.sub(substituted, text)
    if "${" in text:
        raise ValueError(f"a value this reader cannot render: {expression!r}")
    return text


# -- what AWS would answer ---------------------------------------------------------------

#: The condition operators ``evaluate`` knows; a negated one holds when its key is absent.
_OPERATORS = {
    "StringEquals": (False, False, False),  # (negated, wildcards, ignore case)
    "StringNotEquals": (True, False, False),
    "StringLike": (False, True, False),
    "StringNotLike": (True, True, False),
    "ArnEquals": (False, False, False),
    "ArnLike": (False, True, False),
    "ArnNotEquals": (True, False, False),
    "ArnNotLike": (True, True, False),
    "Bool": (False, False, True),
}


def evaluate(
    policies: Sequence[Mapping[str, Any]],
    action: str,
    resource: str,
    context: Mapping[str, str] | None = None,
) -> str:
    """What AWS answers to ``action`` on ``resource`` under these policies (a principal's
    own and the resource's, of one account), with the request's ``context`` keys:
    ``"allowed"``, ``"denied"`` (an explicit deny) or ``"not allowed"`` (no allow)."""
    allowed = False
    for policy in policies:
        for statement in policy["Statement"]:
            if statement.get("Principal", "*") != "*":
                raise ValueError(f"statement {statement.get('Sid')}: a principal this evaluator does not know")  # fmt: skip
            if not (
                _any_matches(statement["Action"], action, ignore_case=True)
                and _any_matches(statement["Resource"], resource, ignore_case=False)
                and _conditions_hold(statement.get("Condition", {}), context or {})
            ):
                continue
            if statement["Effect"] == "Deny":
                return "denied"
            allowed = True
    return "allowed" if allowed else "not allowed"


def _any_matches(patterns: str | Sequence[str], value: str, *, ignore_case: bool) -> bool:
    items = [patterns] if isinstance(patterns, str) else patterns
    return any(_matches(pattern, value, ignore_case=ignore_case) for pattern in items)


def _matches(pattern: str, value: str, *, ignore_case: bool, wildcards: bool = True) -> bool:
    if not wildcards:
        return pattern.lower() == value.lower() if ignore_case else pattern == value
    regex = "".join(
        ".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern
    )  # fmt: skip
    return re.fullmatch(regex, value, re.IGNORECASE if ignore_case else 0) is not None


def _conditions_hold(conditions: Mapping[str, Mapping[str, Sequence[str]]], context: Mapping[str, str]) -> bool:  # fmt: skip
    for operator, keys in conditions.items():
        if operator not in _OPERATORS:
            raise ValueError(f"a condition operator this evaluator does not know: {operator}")
        negated, wildcards, ignore_case = _OPERATORS[operator]
        for key, expected in keys.items():
            if key not in context:
                if not negated:
                    return False
                continue
            found = any(
                _matches(pattern, context[key], ignore_case=ignore_case, wildcards=wildcards)
                for pattern in expected
            )
            if found == negated:
                return False
    return True
