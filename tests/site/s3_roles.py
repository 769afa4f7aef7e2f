"""The site's images on an S3 API server (``aws_server``) under the instance roles' policies.

``on_s3`` makes a bucket and an IAM user for the web role and one for the worker role, each
with its role's S3 statements as Terraform writes them (tests/infra/iam_policies.py), then
has the server enforce them. Requests and pages run as the web role (production's storage
options, pinboard/settings/s3.py, with the web user's keys); Celery's tasks, eager here,
each run as the worker role, as they would on a worker host. ``Bucket.refusing`` has S3
refuse a role for a while, as an outage or a change of its policy would.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
from celery.signals import task_postrun, task_prerun, task_retry
from django.test import override_settings

from pinboard import celery_app
from pinboard.settings.s3 import s3_storages
from tests.aws_server import Answer, AwsServer
from tests.infra.iam_policies import role_policy

REGION = "eu-west-1"
_buckets = itertools.count(1)
_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


@dataclass
class Bucket:
    """The test's bucket, and a client that may do anything (to look at what is stored)."""

    name: str
    admin: Any
    server: AwsServer

    def keys(self) -> set[str]:
        listed = self.admin.list_objects_v2(Bucket=self.name)
        return {item["Key"] for item in listed.get("Contents", ())}

    def body(self, key: str) -> bytes:
        data: bytes = self.admin.get_object(Bucket=self.name, Key=key)["Body"].read()
        return data

    def refused(self) -> list[Answer]:
        """The requests about this bucket that were not answered 2xx. AWS answers a
        missing key 403, not 404, to a role that may not list the bucket (none may), so a
        404 here is a refusal too."""
        prefix = f"/{self.name}"
        return [
            answer
            for answer in self.server.answers()
            if answer.path.startswith(prefix) and not 200 <= answer.status < 300
        ]

    @contextlib.contextmanager
    def refusing(self, kind: str, action: str) -> Iterator[list[str]]:
        """S3 refuses role ``kind`` ``action`` until a task's first retry; yields the names
        of the tasks retried. Eager tasks retry as a worker's do (an eager task's error
        is otherwise raised to its caller at once)."""
        retried: list[str] = []
        user = f"{kind}-{self.name}"

        def lift(sender: Any = None, **_: object) -> None:
            if not retried:
                self.server.enforce(False)
                _iam(self.server).delete_user_policy(UserName=user, PolicyName="outage")
                self.server.enforce(True)
            retried.append(getattr(sender, "name", "?"))

        deny = {"Effect": "Deny", "Action": action, "Resource": "*"}
        policy = json.dumps({"Version": "2012-10-17", "Statement": [deny]})
        self.server.enforce(False)
        _iam(self.server).put_user_policy(UserName=user, PolicyName="outage", PolicyDocument=policy)
        self.server.enforce(True)
        task_retry.connect(lift, weak=False)
        propagates = celery_app.conf.task_eager_propagates
        celery_app.conf.task_eager_propagates = False
        try:
            yield retried
        finally:
            celery_app.conf.task_eager_propagates = propagates
            task_retry.disconnect(lift)


@contextlib.contextmanager
def on_s3(server: AwsServer) -> Iterator[Bucket]:
    """The site's storages on a new bucket of ``server``, as the web role, with tasks as the
    worker role, the roles' policies enforced."""
    name = f"pinboard-media-{next(_buckets)}"
    server.enforce(False)
    admin_keys = _user(server, f"admin-{name}", _ALL)
    admin = boto3.client("s3", **_client(server, admin_keys))
    admin.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": REGION})
    admin.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    variables = {
        "media_bucket_arn": f"arn:aws:s3:::{name}",
        "artifacts_bucket_arn": "arn:aws:s3:::pinboard-artifacts",
        "environment": "test",
    }
    roles = {
        kind: _storages(server, name, _user(server, f"{kind}-{name}", role_policy(kind, variables)))
        for kind in ("web", "worker")
    }
    server.enforce(True)
    try:
        with override_settings(STORAGES=roles["web"]), _tasks_with(roles["worker"]):
            yield Bucket(name, admin, server)
    finally:
        server.enforce(False)


def _iam(server: AwsServer) -> Any:
    return boto3.client("iam", **_client(server, {}))


def _user(server: AwsServer, name: str, policy: dict[str, Any]) -> dict[str, str]:
    """An IAM user with ``policy``; its access key."""
    iam = _iam(server)
    iam.create_user(UserName=name)
    iam.put_user_policy(UserName=name, PolicyName=name, PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return {"access": key["AccessKeyId"], "secret": key["SecretAccessKey"]}


def _client(server: AwsServer, keys: dict[str, str]) -> dict[str, Any]:
    return {
        "endpoint_url": server.url,
        "region_name": REGION,
        "aws_access_key_id": keys.get("access", "setting-up"),
        "aws_secret_access_key": keys.get("secret", "setting-up"),
    }


def _storages(server: AwsServer, bucket: str, keys: dict[str, str]) -> dict[str, Any]:
    return s3_storages(
        bucket,
        REGION,
        None,
        endpoint_url=server.url,
        access_key=keys["access"],
        secret_key=keys["secret"],
        addressing_style="path",
    )


@contextlib.contextmanager
def _tasks_with(storages: dict[str, Any]) -> Iterator[None]:
    """Each task runs with ``storages`` (the worker role's), a task it runs too."""
    entered: list[override_settings] = []

    def start(**_: object) -> None:
        entered.append(override_settings(STORAGES=storages))
        entered[-1].enable()

    def end(**_: object) -> None:
        entered.pop().disable()

    task_prerun.connect(start, weak=False)
    task_postrun.connect(end, weak=False)
    try:
        yield
    finally:
        task_prerun.disconnect(start)
        task_postrun.disconnect(end)
