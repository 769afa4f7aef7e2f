"""infra/terraform: every file parses, the modules are wired, instances are tagged, checkov
passes; and each of those checks catches a copy broken on purpose."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import unavailable
from tests.infra import terraform_checks as checks

REPO = Path(__file__).resolve().parents[2]
TERRAFORM = REPO / "infra" / "terraform"
CHECKOV = REPO / ".venv" / "checkov" / "bin" / "checkov"


def _checkov() -> Path:
    if not CHECKOV.exists():
        unavailable("checkov", f"{CHECKOV.relative_to(REPO)} is not installed")
    return CHECKOV


@pytest.mark.parametrize(
    "path", checks.tf_files(TERRAFORM), ids=lambda p: str(p.relative_to(TERRAFORM))
)
def test_file_parses(path: Path) -> None:
    assert checks.parse_error(path) is None


def test_tree_has_every_module() -> None:
    modules = {p.name for p in (TERRAFORM / "modules").iterdir() if p.is_dir()}
    expected = {"network", "security", "iam", "media", "web", "worker", "mysql"}
    expected |= {"memcached", "redis", "zookeeper", "host", "user_data", "control_db"}
    expected |= {"autoscaled", "monitoring", "backups"}
    assert expected <= modules
    assert (TERRAFORM / "bootstrap" / "main.tf").exists()
    assert {p.name for p in (TERRAFORM / "environments").glob("*.tfvars")} == {
        "staging.tfvars",
        "production.tfvars",
    }


def test_modules_are_wired() -> None:
    assert checks.wiring_problems(TERRAFORM) == []


def test_root_outputs_are_the_contract() -> None:
    assert checks.root_outputs(TERRAFORM) == checks.CONTRACT_OUTPUTS


def test_only_web_and_worker_hosts_reach_the_control_database_and_only_workers_its_secret() -> None:
    security = checks.load_directory(TERRAFORM / "modules" / "security")
    (flows,) = [b["flows"] for doc in security for b in doc.get("locals", []) if "flows" in b]
    into = {
        (flow["from"].strip('"'), flow["port"])
        for flow in flows.values()
        if flow["to"] == '"control_db"'
    }
    assert into == {("web", 3306), ("worker", 3306)}
    iam = checks.load_directory(TERRAFORM / "modules" / "iam")
    locals_ = [b for doc in iam for b in doc.get("locals", []) if "control_db_readers" in b]
    (readers,) = [b["control_db_readers"] for b in locals_]
    assert sorted(r.strip('"') for r in readers) == ["worker"]  # the master secret


def _statements(module: str) -> dict[str, tuple[str, dict[str, object]]]:
    """The dynamic statements of a module's policy document by sid: (for_each, content)."""
    parsed = checks.load_directory(TERRAFORM / "modules" / module)
    found = {}
    for doc in parsed:
        for block in doc.get("data", []):
            for body in block.get('"aws_iam_policy_document"', {}).values():
                for dynamic in body.get("dynamic", []):
                    for statement in dynamic.values():
                        (content,) = statement["content"]
                        found[checks._unquote(content["sid"])] = (statement["for_each"], content)
    return found


def test_the_fenced_group_lets_nothing_in_or_out() -> None:
    security = checks.load_directory(TERRAFORM / "modules" / "security")
    fenced = checks._resources(security, "aws_security_group")["fenced"]
    # Empty lists, not absent blocks: Terraform then removes any rule found on it.
    assert fenced["ingress"] == [] and fenced["egress"] == []
    rules = [
        body
        for kind in ("aws_vpc_security_group_ingress_rule", "aws_vpc_security_group_egress_rule")
        for body in checks._resources(security, kind).values()
    ]
    assert rules and not any("fenced" in str(rule) for rule in rules)
    assert not checks._resources(security, "aws_security_group_rule")


def test_only_workers_may_fence_and_only_this_environments_shard_hosts() -> None:
    iam = checks.load_directory(TERRAFORM / "modules" / "iam")
    (fencers,) = [b["fencers"] for doc in iam for b in doc.get("locals", []) if "fencers" in b]
    assert [f.strip('"') for f in fencers] == ["worker"]
    ec2 = {
        sid: (for_each, content)
        for sid, (for_each, content) in _statements("iam").items()
        if any("ec2:" in action for action in content["actions"])  # type: ignore[attr-defined]
    }
    # Every EC2 grant: the fence's, and the monitoring host's discovery (read only).
    assert {sid: for_each for sid, (for_each, _) in ec2.items()} == dict.fromkeys(
        ("FenceFindShardHosts", "FenceShardHosts", "FenceIntoTheFencedGroup"),
        "${contains(local.fencers, each.key) ? [1] : []}",
    ) | {"DiscoverScrapeTargets": "${contains(local.scrapers, each.key) ? [1] : []}"}
    grants = {
        sid: ([checks._unquote(a) for a in content["actions"]], content["resources"])  # type: ignore[attr-defined]
        for sid, (_, content) in ec2.items()
    }
    assert grants == {
        "FenceFindShardHosts": (["ec2:DescribeInstances"], ['"*"']),
        "FenceShardHosts": (
            ["ec2:ModifyInstanceAttribute", "ec2:StopInstances"],
            ["${local.instance_arns}"],
        ),
        "FenceIntoTheFencedGroup": (
            ["ec2:ModifyInstanceAttribute"],
            ["${var.fenced_security_group_arn}"],
        ),
        "DiscoverScrapeTargets": (["ec2:DescribeInstances"], ['"*"']),
    }
    conditions = {
        checks._unquote(c["variable"]): (checks._unquote(c["test"]), c["values"])
        for c in ec2["FenceShardHosts"][1]["condition"]  # type: ignore[union-attr]
    }
    # The Role the shard hosts carry (modules/mysql), the Environment of default_tags.
    mysql = (TERRAFORM / "modules" / "mysql" / "main.tf").read_text()
    assert 'role               = "mysql_shard"' in mysql
    assert conditions == {
        "aws:ResourceTag/Role": ("StringEquals", ['"mysql_shard"']),
        "aws:ResourceTag/Environment": ("StringEquals", ["${var.environment}"]),
    }
    main = checks.load_directory(TERRAFORM)
    (call,) = [b['"iam"'] for doc in main for b in doc.get("module", []) if '"iam"' in b]
    assert call["fenced_security_group_arn"] == "${module.security.fenced_arn}"


def test_the_health_check_asks_readiness_which_the_internet_cannot() -> None:
    web = checks.load_directory(TERRAFORM / "modules" / "web")
    (group,) = checks._resources(web, "aws_lb_target_group").values()
    assert checks._unquote(group["health_check"][0]["path"]) == "/readyz"
    (rule,) = checks._resources(web, "aws_lb_listener_rule").values()
    assert rule["listener_arn"] == "${aws_lb_listener.https.arn}" and rule["priority"] == 1
    paths = rule["condition"][0]["path_pattern"][0]["values"]
    assert "/readyz" in [checks._unquote(p) for p in paths]
    response = rule["action"][0]
    assert checks._unquote(response["type"]) == "fixed-response"
    assert checks._unquote(response["fixed_response"][0]["status_code"]) == "404"
    # The rule matches the path as sent: another spelling reaches the site, which refuses
    # a request carrying X-Forwarded-For, so the load balancer must keep adding it.
    (balancer,) = checks._resources(web, "aws_lb").values()
    mode = checks._unquote(balancer.get("xff_header_processing_mode", "append"))
    assert mode in ("append", "preserve")


def test_instances_are_tagged() -> None:
    assert checks.tag_problems(TERRAFORM) == []


def test_checkov_passes() -> None:
    report = checks.checkov_report(_checkov(), TERRAFORM)
    failures = checks.checkov_failures(report)
    assert failures == [], "checkov failed:\n" + "\n".join(failures)
    assert report["summary"]["passed"] > 100  # it really scanned the modules


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "terraform"
    shutil.copytree(TERRAFORM, target, ignore=shutil.ignore_patterns(".terraform*"))
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_a_missing_brace_is_caught(copy: Path) -> None:
    broken = copy / "modules" / "network" / "outputs.tf"
    text = broken.read_text().rstrip()
    assert text.endswith("}")
    broken.write_text(text[:-1])
    errors = checks.parse_errors(copy)
    assert len(errors) == 1 and errors[0].startswith(str(broken))


@pytest.mark.parametrize(
    ("file", "old", "new", "problem"),
    [
        pytest.param(
            "modules/web/main.tf",
            "var.instance_type",
            "var.web_instance_typo",
            "modules/web: var.web_instance_typo is used but not declared",
            id="undeclared-variable",
        ),
        pytest.param(
            "modules/mysql/main.tf",
            "local.hosts",
            "local.host_map",
            "modules/mysql: local.host_map is used but not defined",
            id="undefined-local",
        ),
        pytest.param(
            "outputs.tf",
            "module.web.alb_dns_name",
            "module.web.alb_name",
            ".: module.web.alb_name is not an output of web",
            id="missing-module-output",
        ),
        pytest.param(
            "main.tf",
            "  vpc_id      = module.network.vpc_id\n",
            "",
            ".: module security does not pass required vpc_id",
            id="required-argument-missing",
        ),
        pytest.param(
            "modules/redis/main.tf",
            '  data_volume        = local.data_volume\n}\n\nmodule "broker"',
            '  data_volume        = local.data_volume\n  disk_size          = 10\n}\n\nmodule "broker"',
            "modules/redis: module host passes disk_size, not a variable of it",
            id="unknown-argument",
        ),
    ],
)
def test_a_wiring_mistake_is_caught(
    copy: Path, file: str, old: str, new: str, problem: str
) -> None:
    _edit(copy / file, old, new)
    assert problem in checks.wiring_problems(copy)


def test_a_missing_role_tag_is_caught(copy: Path) -> None:
    host = "  tags = {\n    Name = var.name\n    Role = var.role\n  }\n\n  volume_tags"
    _edit(copy / "modules" / "host" / "main.tf", host, host.replace("    Role = var.role\n", ""))
    _edit(copy / "modules" / "autoscaled" / "main.tf", "      Role        = var.role\n", "")
    assert checks.tag_problems(copy) == [
        "modules/autoscaled: aws_launch_template.this tags no instance with a Role",
        "modules/host: aws_instance.this has no Role tag",
    ]


def test_missing_default_tags_are_caught(copy: Path) -> None:
    _edit(copy / "providers.tf", "      Environment = var.environment\n", "")
    assert checks.tag_problems(copy) == ["root: the aws provider's default_tags lack Environment"]


def test_a_checkov_failure_is_reported(copy: Path) -> None:
    # IMDSv1 allowed again on the autoscaled hosts: CKV_AWS_79, once per tier.
    _edit(
        copy / "modules" / "autoscaled" / "main.tf",
        'http_tokens                 = "required"',
        'http_tokens                 = "optional"',
    )
    failures = checks.checkov_failures(checks.checkov_report(_checkov(), copy))
    imdsv1 = sorted(f.split()[1] for f in failures if f.startswith("CKV_AWS_79 "))
    assert imdsv1 == [
        "module.web.module.hosts.aws_launch_template.this",
        "module.worker.module.hosts.aws_launch_template.this",
    ]
