"""The fence the operators' hosts run before an emergency failover promotes a replica
(infra/puppet/modules/profile/files/pinboard-fence-mysql), run for real against a fake
`aws` that records its calls and answers with canned JSON."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from shardstore.control.fencing import FENCE_SECONDS, command_fence
from shardstore.control.mysql_hosts import HostError
from tests.conftest import unavailable
from tests.infra.puppet_checks import PUPPET_DIR

FENCE = PUPPET_DIR / "modules" / "profile" / "files" / "pinboard-fence-mysql"
FENCED = "sg-0fe0ced"
DESCRIBE, MODIFY, STOP = "describe-instances", "modify-instance-attribute", "stop-instances"
ARGS = ["eu-west-1", FENCED, "staging"]

# The fake: each call is a line of `calls`; the N-th call of a kind (describe-instances,
# modify-instance-attribute, stop-instances) fails with the error in <kind>.<N>.fail or
# <kind>.fail, sleeps <kind>.sleep seconds if set, else answers <kind>.<N>.json or
# <kind>.json.
FAKE_AWS = """#!/bin/sh
dir={dir}
printf '%s\\n' "$*" >>"$dir/calls"
for word; do
    case $word in
        describe-instances | modify-instance-attribute | stop-instances) kind=$word; break ;;
    esac
done
echo >>"$dir/$kind.count"
n=$(wc -l <"$dir/$kind.count")
for error in "$dir/$kind.$n.fail" "$dir/$kind.fail"; do
    if [ -f "$error" ]; then
        echo >&2
        cat "$error" >&2
        exit 254
    fi
done
if [ -f "$dir/$kind.sleep" ]; then
    exec sleep "$(cat "$dir/$kind.sleep")"
fi
for answer in "$dir/$kind.$n.json" "$dir/$kind.json"; do
    if [ -f "$answer" ]; then
        cat "$answer"
        exit 0
    fi
done
"""


def instance(
    instance_id: str = "i-0a1", state: str = "running", groups: tuple[str, ...] = ("sg-mysql",)
) -> dict[str, Any]:
    return {
        "InstanceId": instance_id,
        "PrivateIpAddress": "10.0.1.10",
        "State": {"Code": 16, "Name": state},
        "SecurityGroups": [{"GroupId": g, "GroupName": g} for g in groups],
        "Tags": [{"Key": "Name", "Value": "mysql001a"}, {"Key": "Role", "Value": "mysql_shard"}],
    }


def reservations(*instances: dict[str, Any]) -> dict[str, Any]:
    return {"Reservations": [{"ReservationId": "r-1", "Instances": [i]} for i in instances]}


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    calls: list[str]
    seconds: float

    @property
    def said(self) -> str:
        """The last line of its standard error: what the failover's journal keeps."""
        return self.stderr.strip().splitlines()[-1]


class FakeAws:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        bin_dir = directory / "bin"
        bin_dir.mkdir()
        (bin_dir / "aws").write_text(FAKE_AWS.format(dir=directory))
        (bin_dir / "aws").chmod(0o755)
        self.path = f"{bin_dir}:{os.environ['PATH']}"
        # By default: one running instance at the address, stopping once asked to stop.
        self.answer(DESCRIBE, reservations(instance()), call=1)
        self.answer(DESCRIBE, reservations(instance(state="stopping", groups=(FENCED,))))
        self.answer(STOP, {"StoppingInstances": [{"InstanceId": "i-0a1"}]})

    def answer(self, kind: str, document: dict[str, Any], call: int | None = None) -> None:
        name = f"{kind}.{call}.json" if call else f"{kind}.json"
        (self.dir / name).write_text(json.dumps(document, indent=2))

    def fail(self, kind: str, error: str, call: int | None = None) -> None:
        name = f"{kind}.{call}.fail" if call else f"{kind}.fail"
        (self.dir / name).write_text(error + "\n")

    def start_over(self) -> None:
        """Calls are counted from the first again."""
        for count in self.dir.glob("*.count"):
            count.unlink()

    def hang(self, kind: str, seconds: int) -> None:
        (self.dir / f"{kind}.sleep").write_text(f"{seconds}\n")

    def fence(self, target: str = "10.0.1.10:3306", seconds: int | None = None) -> Run:
        env = {**os.environ, "PATH": self.path}
        if seconds is not None:
            env["FENCE_MYSQL_SECONDS"] = str(seconds)
        started = time.monotonic()
        done = subprocess.run(
            ["sh", str(FENCE), *ARGS, "mysql001a", target],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        calls_file = self.dir / "calls"
        calls = calls_file.read_text().splitlines() if calls_file.exists() else []
        return Run(done.returncode, done.stdout, done.stderr, calls, time.monotonic() - started)


def kinds(run: Run) -> list[str]:
    return [re.search(r" ec2 (\S+)", call).group(1) for call in run.calls]  # type: ignore[union-attr]


@pytest.fixture
def aws(tmp_path: Path) -> FakeAws:
    for tool in ("jq", "timeout"):
        if shutil.which(tool) is None:
            unavailable(tool, f"{tool} is not on PATH (Debian packages: jq, coreutils)")
    return FakeAws(tmp_path)


def test_swaps_the_groups_then_stops_and_says_what_it_did(aws: FakeAws) -> None:
    run = aws.fence()
    assert run.returncode == 0, run.stderr
    describe, modify, stop, poll = run.calls
    assert kinds(run) == [DESCRIBE, MODIFY, STOP, DESCRIBE]  # the groups first, then the stop
    assert all(call.startswith("--region eu-west-1 --output json ") for call in run.calls)
    assert describe.split(" --filters ")[1].split() == [
        "Name=private-ip-address,Values=10.0.1.10",
        "Name=tag:Role,Values=mysql_shard",
        "Name=tag:Environment,Values=staging",
        "Name=instance-state-name,Values=pending,running,stopping,stopped",
    ]
    assert modify.endswith(f"ec2 modify-instance-attribute --instance-id i-0a1 --groups {FENCED}")
    assert stop.endswith("ec2 stop-instances --instance-ids i-0a1 --force")
    assert poll.endswith("ec2 describe-instances --instance-ids i-0a1")
    (line,) = run.stdout.splitlines()  # one line, for the journal
    assert line == (
        f"i-0a1 (mysql001a, 10.0.1.10): security groups sg-mysql replaced by {FENCED},"
        " stopped by force (now stopping; its EBS volumes kept)"
    )


def test_waits_until_the_instance_is_no_longer_running_in_the_fenced_group(aws: FakeAws) -> None:
    aws.answer(DESCRIBE, reservations(instance(groups=("sg-mysql", "sg-x"))), call=1)
    # Still running, then stopping but not yet seen in the group (eventual consistency).
    aws.answer(DESCRIBE, reservations(instance(groups=(FENCED,))), call=2)
    aws.answer(DESCRIBE, reservations(instance(state="stopping")), call=3)
    run = aws.fence()
    assert run.returncode == 0, run.stderr
    assert kinds(run).count(DESCRIBE) == 4
    assert "security groups sg-mysql,sg-x replaced by" in run.stdout


def test_a_host_already_stopped_is_fenced_again(aws: FakeAws) -> None:
    """A failover run again after its fence stopped the host finds the fence done."""
    stopped = reservations(instance(state="stopped", groups=(FENCED,)))
    aws.answer(DESCRIBE, stopped, call=1)
    aws.answer(DESCRIBE, stopped)
    run = aws.fence()
    assert run.returncode == 0, run.stderr
    assert "(now stopped;" in run.stdout


@pytest.mark.parametrize(
    "target",
    [
        "mysql001a:3306",
        "db.example.com:3306",
        "10.0.1:3306",
        "10.0.1.256:3306",
        "10.0.01.10:3306",
        "10.0.1.10.5:3306",
        "[fe80::1]:3306",
        "10.0.1.10",
        "10.0.1.10:",
    ],
)
def test_refuses_an_address_that_is_not_an_ipv4_address(aws: FakeAws, target: str) -> None:
    run = aws.fence(target)
    assert run.returncode != 0
    assert run.calls == []
    assert run.said.startswith("pinboard-fence-mysql: mysql001a: ")
    assert run.stdout == ""


@pytest.mark.parametrize("count", [0, 2])
def test_refuses_unless_exactly_one_instance_has_the_address(aws: FakeAws, count: int) -> None:
    found = [instance(f"i-0a{n}") for n in range(count)]
    aws.answer(DESCRIBE, reservations(*found), call=1)
    run = aws.fence()
    assert run.returncode != 0
    assert kinds(run) == [DESCRIBE]  # nothing swapped, nothing stopped
    assert f"{count} instances of staging tagged Role=mysql_shard" in run.said
    assert "nothing done" in run.said


@pytest.mark.parametrize(
    ("kind", "call", "made"),
    [
        (DESCRIBE, 1, [DESCRIBE]),
        (MODIFY, 1, [DESCRIBE, MODIFY]),
        (STOP, 1, [DESCRIBE, MODIFY, STOP]),
        (DESCRIBE, 2, [DESCRIBE, MODIFY, STOP, DESCRIBE]),
    ],
)
def test_fails_when_a_call_fails(aws: FakeAws, kind: str, call: int, made: list[str]) -> None:
    error = "An error occurred (UnauthorizedOperation) when calling the operation: no"
    aws.fail(kind, error, call)
    run = aws.fence()
    assert run.returncode != 0
    assert kinds(run) == made
    assert kind in run.said and run.said.endswith(error)
    assert run.stdout == ""


def test_fails_on_an_answer_that_is_not_json(aws: FakeAws) -> None:
    (aws.dir / "describe-instances.1.json").write_text("<html>proxy error</html>\n")
    run = aws.fence()
    assert run.returncode != 0
    assert "unexpected answer from describe-instances" in run.said


def test_gives_up_in_time_on_an_instance_that_keeps_running(aws: FakeAws) -> None:
    aws.answer(DESCRIBE, reservations(instance(groups=(FENCED,))))
    run = aws.fence(seconds=4)
    assert run.returncode != 0
    assert run.seconds < 4 + 2
    assert "still running in sg-0fe0ced when the fence's 4 s ran out" in run.said


def test_a_call_that_hangs_is_cut_at_the_deadline(aws: FakeAws) -> None:
    aws.hang(MODIFY, 60)
    run = aws.fence(seconds=3)
    assert run.returncode != 0
    assert run.seconds < 3 + 2
    assert kinds(run) == [DESCRIBE, MODIFY]  # never stopped
    assert "modify-instance-attribute (security groups of i-0a1) did not answer" in run.said


def test_the_whole_fence_fits_in_the_failovers_wait() -> None:
    (default,) = re.findall(r"FENCE_MYSQL_SECONDS:-(\d+)", FENCE.read_text())
    # Its polls and the calls' own deadlines come out of the same budget.
    assert int(default) + 5 < FENCE_SECONDS


def test_the_failover_runs_it_as_puppet_sets_it(aws: FakeAws) -> None:
    """The script with the arguments Puppet gives it, run by the failover's own runner
    (shardstore.control.fencing): the journal gets the script's line, or its reason."""
    fence = command_fence(f"sh {FENCE} {' '.join(ARGS)}")
    assert fence is not None
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", aws.path)
        note = fence("mysql001a", "mysql://10.0.1.10:3306")
        assert note.startswith("mysql001a fenced: i-0a1 (mysql001a, 10.0.1.10): ")
        aws.start_over()
        aws.answer(DESCRIBE, reservations(), call=1)
        with pytest.raises(HostError, match=r"failed \(1\): .*0 instances .*nothing done"):
            fence("mysql001a", "mysql://10.0.1.10:3306")
