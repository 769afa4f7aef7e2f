"""The backup store in Terraform (modules/backups, modules/iam): a bucket whose every version
is locked for the retention (Object Lock, COMPLIANCE), versioned, encrypted with a key of
its own, private, logged, expired by its lifecycle after the retention; the shard hosts'
role may only put into it, the workers' may put, read and list, no role may delete, and its
policy denies deletes and changes to what protects it to all but the administrators. The
policies are read from the HCL and asked what AWS would answer (tests/infra/iam_policies.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.infra import iam_policies as iam
from tests.infra import terraform_checks as checks

TERRAFORM = Path(__file__).resolve().parents[2] / "infra" / "terraform"
BACKUPS = TERRAFORM / "modules" / "backups"

ACCOUNT = "111122223333"
BUCKET = "arn:aws:s3:::pinboard-staging-backups-111122223333"
ROOT = f"arn:aws:iam::{ACCOUNT}:root"
TERRAFORM_ROLE = f"arn:aws:iam::{ACCOUNT}:role/pinboard-terraform"
VARIABLES = {
    "environment": "staging",
    "media_bucket_arn": "arn:aws:s3:::pinboard-staging-media-111122223333",
    "artifacts_bucket_arn": "arn:aws:s3:::pinboard-staging-artifacts-111122223333",
    "backups_bucket_arn": BUCKET,
}
#: What a role might ask of the store, beyond putting.
READS = ("s3:GetObject", "s3:GetObjectVersion")
DELETES = ("s3:DeleteObject", "s3:DeleteObjectVersion")
PROTECTION = (
    "s3:PutBucketObjectLockConfiguration",
    "s3:PutLifecycleConfiguration",
    "s3:PutBucketPolicy",
    "s3:DeleteBucketPolicy",
    "s3:PutObjectRetention",
    "s3:BypassGovernanceRetention",
)


def _resources(kind: str) -> dict[str, dict[str, Any]]:
    return checks._resources(checks.load_directory(BACKUPS), kind)


def _one(kind: str) -> dict[str, Any]:
    (body,) = _resources(kind).values()
    return body


def _root_call() -> dict[str, Any]:
    main = checks.load_directory(TERRAFORM)
    (call,) = [b['"backups"'] for doc in main for b in doc.get("module", []) if '"backups"' in b]
    return dict(call)


def _root_variable(name: str) -> dict[str, Any]:
    return checks._blocks(checks.load_directory(TERRAFORM), "variable")[name]


def _local(name: str) -> str:
    (value,) = [
        b[name]
        for doc in checks.load_directory(BACKUPS)
        for b in doc.get("locals", [])
        if name in b
    ]
    return str(value)


# -- the bucket ----------------------------------------------------------------------------


def test_every_version_is_locked_for_the_retention_in_compliance_mode() -> None:
    assert _one("aws_s3_bucket")["object_lock_enabled"] is True
    lock = _one("aws_s3_bucket_object_lock_configuration")
    (rule,) = lock["rule"]
    (retention,) = rule["default_retention"]
    assert checks._unquote(retention["mode"]) == "COMPLIANCE"  # no bypass for anyone
    assert retention["days"] == "${var.retention_days}" and "years" not in retention
    assert _root_call()["retention_days"] == "${var.backup_retention_days}"
    assert _root_variable("backup_retention_days")["default"] == 8


def test_the_bucket_is_versioned_encrypted_with_its_own_rotated_key_private_and_logged() -> None:
    (versioning,) = _one("aws_s3_bucket_versioning")["versioning_configuration"]
    assert checks._unquote(versioning["status"]) == "Enabled"

    (rule,) = _one("aws_s3_bucket_server_side_encryption_configuration")["rule"]
    (default,) = rule["apply_server_side_encryption_by_default"]
    assert checks._unquote(default["sse_algorithm"]) == "aws:kms"
    assert default["kms_master_key_id"] == "${aws_kms_key.backups.arn}"
    key = _one("aws_kms_key")
    assert key["enable_key_rotation"] is True

    block = _one("aws_s3_bucket_public_access_block")
    flags = ("block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets")  # fmt: skip
    assert all(block[flag] is True for flag in flags)
    (ownership,) = _one("aws_s3_bucket_ownership_controls")["rule"]
    assert checks._unquote(ownership["object_ownership"]) == "BucketOwnerEnforced"

    logging = _one("aws_s3_bucket_logging")
    assert logging["target_bucket"] == "${var.log_bucket_id}"
    assert checks._unquote(logging["target_prefix"]).startswith("s3-access/")
    assert _root_call()["log_bucket_id"] == "${module.logs.bucket_id}"


def test_the_lifecycle_expires_objects_after_the_retention_and_old_versions() -> None:
    (rule,) = _one("aws_s3_bucket_lifecycle_configuration")["rule"]
    assert checks._unquote(rule["status"]) == "Enabled" and rule["filter"]  # every object
    (expiration,) = rule["expiration"]
    assert expiration["days"] == "${local.expire_days}"
    margin = re.fullmatch(r"\$\{var\.retention_days \+ (\d+)\}", _local("expire_days"))
    assert margin and int(margin.group(1)) >= 1  # a backup a day: the one before the window
    (noncurrent,) = rule["noncurrent_version_expiration"]
    assert noncurrent["noncurrent_days"] >= 1
    assert rule["abort_incomplete_multipart_upload"]


def test_the_policy_comes_last_so_terraform_may_set_the_lock_and_the_lifecycle() -> None:
    policy = _one("aws_s3_bucket_policy")
    assert policy["policy"] == "${data.aws_iam_policy_document.bucket.json}"
    assert {
        "${aws_s3_bucket_object_lock_configuration.this}",
        "${aws_s3_bucket_lifecycle_configuration.this}",
    } <= set(policy["depends_on"])


def test_the_store_and_its_key_reach_the_hosts_through_the_outputs() -> None:
    outputs = checks._blocks(checks.load_directory(TERRAFORM), "output")
    assert (
        checks._unquote(outputs["backup_store"]["value"])
        == "s3://${module.backups.bucket}/${var.environment}"
    )
    assert outputs["backup_kms_key"]["value"] == "${module.backups.kms_key_arn}"
    assert {"backup_store", "backup_kms_key"} <= checks.CONTRACT_OUTPUTS
    main = checks.load_directory(TERRAFORM)
    (call,) = [b['"iam"'] for doc in main for b in doc.get("module", []) if '"iam"' in b]
    assert call["backups_bucket_arn"] == "${module.backups.bucket_arn}"
    assert call["backups_kms_key_arn"] == "${module.backups.kms_key_arn}"


# -- who may do what -------------------------------------------------------------------------


def _administrators(*more: str) -> list[str]:
    """local.administrators as Terraform computes it: the root user, then the variable's."""
    definition = _local("administrators")
    assert definition.startswith("${concat([") and ":iam::${local.account_id}:root" in definition
    assert definition.endswith("var.administrators)}")
    assert _root_call()["administrators"] == "${var.backup_administrators}"
    assert _root_variable("backup_administrators")["default"] == []
    return [ROOT, *more]


def _bucket_policy(*administrators: str) -> dict[str, Any]:
    return iam.bucket_policy(
        {
            "aws_s3_bucket.this.arn": BUCKET,
            "local.administrators": _administrators(*administrators),
        }
    )


def _role(kind: str) -> list[dict[str, Any]]:
    """Every S3 statement of the role ``kind``: both its policies."""
    return [iam.role_policy(kind, VARIABLES, document) for document in ("this", "backups")]


def _answer(
    kind: str, action: str, resource: str, *, prefix: str | None = None, secure: bool = True
) -> str:
    context = {
        "aws:PrincipalArn": f"arn:aws:iam::{ACCOUNT}:role/pinboard-staging-{kind}",
        "aws:SecureTransport": "true" if secure else "false",
    }
    if prefix is not None:
        context["s3:prefix"] = prefix
    return iam.evaluate([*_role(kind), _bucket_policy()], action, resource, context)


OBJECT = f"{BUCKET}/staging/mysql001b/20261129T001512Z/part-00000.mbstream.zst"


def test_the_roles_policy_documents_are_the_ones_the_reader_knows() -> None:
    # A statement in a document this reader does not read would escape every test.
    assert iam.documents() == iam.DOCUMENTS


def test_shard_hosts_may_only_put_their_backups() -> None:
    assert _answer("mysql", "s3:PutObject", OBJECT) == "allowed"
    for action in (*READS, *DELETES, "s3:PutObjectRetention", "s3:GetObjectRetention"):
        assert _answer("mysql", action, OBJECT) != "allowed", action
    assert _answer("mysql", "s3:ListBucket", BUCKET, prefix="staging/") != "allowed"
    assert _answer("mysql", "s3:ListBucketVersions", BUCKET, prefix="staging/") != "allowed"
    # Only under the environment's prefix.
    assert _answer("mysql", "s3:PutObject", f"{BUCKET}/production/mysql001b/x") != "allowed"
    assert _answer("mysql", "s3:PutObject", f"{BUCKET}/mysql001b/x") != "allowed"


def test_workers_may_put_read_and_list_the_environments_backups_but_never_delete() -> None:
    assert _answer("worker", "s3:PutObject", OBJECT) == "allowed"
    assert _answer("worker", "s3:GetObject", OBJECT) == "allowed"
    assert _answer("worker", "s3:ListBucket", BUCKET, prefix="staging/") == "allowed"
    assert _answer("worker", "s3:ListBucket", BUCKET, prefix="staging/binlogs/mysql001a/") == "allowed"  # fmt: skip
    for action in (*DELETES, *PROTECTION, "s3:GetObjectVersion"):
        assert _answer("worker", action, OBJECT) != "allowed", action
    assert _answer("worker", "s3:ListBucket", BUCKET, prefix="production/") != "allowed"
    assert _answer("worker", "s3:ListBucket", BUCKET) != "allowed"  # the whole bucket
    assert _answer("worker", "s3:GetObject", f"{BUCKET}/production/x") != "allowed"


@pytest.mark.parametrize("kind", ["web", "data", "monitoring"])
def test_the_other_roles_may_not_touch_the_backups(kind: str) -> None:
    assert iam.role_policy(kind, VARIABLES, "backups")["Statement"] == []
    for action in ("s3:PutObject", *READS, *DELETES):
        assert _answer(kind, action, OBJECT) != "allowed", action


def test_only_the_roles_that_put_may_use_the_backups_key_and_only_through_s3() -> None:
    iam_module = checks.load_directory(TERRAFORM / "modules" / "iam")
    (writers,) = [b["backup_writers"] for doc in iam_module for b in doc.get("locals", []) if "backup_writers" in b]  # fmt: skip
    assert sorted(checks._unquote(w) for w in writers) == ["mysql", "worker"]
    text = (TERRAFORM / "modules" / "iam" / "main.tf").read_text()
    backups = text[text.index('data "aws_iam_policy_document" "backups"') :]
    backups = backups[: backups.index('resource "aws_iam_role_policy" "backups"')]
    key = backups[backups.index('sid       = "EncryptBackups"') :]
    key = key[: key.index("\n  }\n")]
    assert '["kms:GenerateDataKey", "kms:Decrypt"]' in key  # Decrypt: a multipart put's
    assert "[var.backups_kms_key_arn]" in key and '"kms:ViaService"' in key
    # The key is named nowhere else: the roles' main policy never grants it.
    assert text.count("var.backups_kms_key_arn") == 1


@pytest.mark.parametrize("kind", ["mysql", "worker"])
@pytest.mark.parametrize("action", [*DELETES, *PROTECTION[:4]])
def test_the_bucket_policy_denies_deletes_and_protection_changes_whatever_a_role_may(
    kind: str, action: str
) -> None:
    anything = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:*"], "Resource": ["*"]}]}  # fmt: skip
    context = {
        "aws:PrincipalArn": f"arn:aws:iam::{ACCOUNT}:role/pinboard-staging-{kind}",
        "aws:SecureTransport": "true",
    }
    resource = BUCKET if action.startswith("s3:Put") or "Policy" in action else OBJECT
    assert iam.evaluate([anything, _bucket_policy()], action, resource, context) == "denied"
    # ...but not the root user, nor a listed administrator (the role Terraform runs as).
    for administrator in (ROOT, TERRAFORM_ROLE):
        context["aws:PrincipalArn"] = administrator
        policies = [anything, _bucket_policy(TERRAFORM_ROLE)]
        assert iam.evaluate(policies, action, resource, context) == "allowed"


def test_the_bucket_refuses_plain_http_to_everyone() -> None:
    assert _answer("worker", "s3:GetObject", OBJECT, secure=False) == "denied"
    anything = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:*"], "Resource": ["*"]}]}  # fmt: skip
    context = {"aws:PrincipalArn": ROOT, "aws:SecureTransport": "false"}
    assert iam.evaluate([anything, _bucket_policy()], "s3:GetObject", OBJECT, context) == "denied"


def test_the_evaluator_reads_conditions_as_aws_does() -> None:
    """The answers above are only as good as ``evaluate``: a negated operator holds when
    its key is absent, a positive one does not; a deny wins over an allow."""
    policy = {
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["s3:List*"],
                "Resource": ["arn:aws:s3:::b"],
                "Condition": {"StringLike": {"s3:prefix": ["e/*"]}},
            },
            {
                "Effect": "Deny",
                "Action": ["s3:ListBucket"],
                "Resource": ["*"],
                "Condition": {"ArnNotLike": {"aws:PrincipalArn": ["arn:aws:iam::1:role/ok*"]}},
            },
        ]
    }
    ok = {"aws:PrincipalArn": "arn:aws:iam::1:role/ok-1"}
    assert iam.evaluate([policy], "s3:listbucket", "arn:aws:s3:::b", ok | {"s3:prefix": "e/x"}) == "allowed"  # fmt: skip
    assert iam.evaluate([policy], "s3:ListBucket", "arn:aws:s3:::b", ok) == "not allowed"
    assert iam.evaluate([policy], "s3:ListBucket", "arn:aws:s3:::b", {"s3:prefix": "e/"}) == "denied"  # fmt: skip
    assert iam.evaluate([policy], "s3:ListBucketVersions", "arn:aws:s3:::b", {"s3:prefix": "e/"}) == "allowed"  # fmt: skip
    assert iam.evaluate([policy], "s3:GetObject", "arn:aws:s3:::b/e/x", ok) == "not allowed"


#: GB of instance store of the shard hosts' types (the data a host's backup unpacks to).
INSTANCE_STORE_GB = {"i4i.large": 468, "i4i.xlarge": 937, "i4i.2xlarge": 1875, "i4i.4xlarge": 3750}  # fmt: skip


def test_a_worker_host_s_disk_holds_a_shard_host_s_data_unpacked() -> None:
    """The verification and the restores unpack a whole host's backup on a worker host."""
    import hcl2

    launch = (TERRAFORM / "modules" / "autoscaled" / "main.tf").read_text()
    assert "volume_size           = var.root_volume_size" in launch
    worker = (TERRAFORM / "modules" / "worker" / "main.tf").read_text()
    assert "root_volume_size   = var.volume_size" in worker
    assert "volume_size        = var.worker_volume_size" in (TERRAFORM / "main.tf").read_text()
    for tfvars in sorted((TERRAFORM / "environments").glob("*.tfvars")):
        with tfvars.open() as f:
            values = hcl2.load(f)
        store = INSTANCE_STORE_GB[values["mysql_instance_type"].strip('"')]
        assert values["worker_volume_size"] >= store, tfvars.name
