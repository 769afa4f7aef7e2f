"""The console's failover and split: which replica takes a master's shards.

``shardstore failover HOST [--to REPLICA]`` and ``shardstore split HOST [--to REPLICA]``
let an operator name the replica; so do their forms here, with a select of the replicas
the shard map in force names for each master (``replicas_by_master``), "default" meaning
the command's own default. A name that is not one of the host's replicas is refused on
the form; the planners (``failover_plan``, ``split_plan``) pass ``to`` to the same
``shardstore.control`` functions the command calls, which check it again against the map
they plan from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import forms

from shardstore import InvalidTopology
from shardstore.control import documents
from shardstore.control.config_source import NotPublished
from shardstore.control.context import Control
from shardstore.control.emergency import plan_emergency_failover
from shardstore.control.failover import master_and_replicas, plan_failover
from shardstore.control.plans import Plan
from shardstore.control.split import plan_split

from .forms import NAME, name_field

#: A handover form's ``replicas``: each master's replicas, in the map's order.
Replicas = Mapping[str, Sequence[str]]


def replicas_by_master(document: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each master's replicas as a planned failover or a split sees them; a master whose
    ranges name no replica, or not the same ones, is left out (both refuse it)."""
    found = {}
    for master in dict.fromkeys(r["master"] for r in document.get("ranges", [])):
        try:
            found[master] = master_and_replicas(dict(document), master)[1]
        except InvalidTopology:
            continue
    return found


def replica_options(made: Control) -> dict[str, Any]:
    """The handover forms' options, from the shard map in force (none published: none)."""
    try:
        document = made.source.current(documents.SHARDS).document
    except NotPublished:
        return {"replicas": {}}
    return {"replicas": replicas_by_master(document)}


def replica_field(help_text: str = "") -> forms.CharField:
    """A replica's name, chosen in a select ("": the default); NAME bounds its length (a
    select takes no maxlength)."""
    return forms.CharField(
        required=False, validators=[NAME], widget=forms.Select,
        label="Replica to take the shards", help_text=help_text,
    )  # fmt: skip


class HandoverForm(forms.Form):
    """A master, and the replica to hand its shards to ("" for the command's default).

    Given ``replicas`` (``replicas_by_master``), the select offers the host's replicas
    when the host is known, else every master's, and ``to`` must be one of the host's;
    without, ``to`` is only checked as a name (the planner checks it against the map)."""

    #: What "default" means for this operation, as the command's ``--to`` help says it.
    to_default = "the default"
    host = name_field()
    to = replica_field()

    def __init__(self, *args: Any, replicas: Replicas | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.replicas = replicas
        self.fields["to"].widget = forms.Select(
            choices=[("", f"default: {self.to_default}"), *self._offered()]
        )

    def _offered(self) -> list[Any]:
        if self.replicas is None:
            return []
        host = self.data.get("host") if self.is_bound else self.initial.get("host")
        if isinstance(host, str) and host in self.replicas:
            return [(name, name) for name in self.replicas[host]]
        return [
            (f"replicas of {master}", [(name, name) for name in names])
            for master, names in self.replicas.items()
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        host, to = data.get("host"), data.get("to")
        if to and host and self.replicas is not None and to not in self.replicas.get(host, ()):
            named = self.replicas.get(host)
            known = f"its replicas: {', '.join(named)}" if named else f"{host} masters no range with replicas"  # fmt: skip
            self.add_error("to", f"{to} is not a replica of {host} in the shard map ({known})")
        return data


class FailoverForm(HandoverForm):
    to_default = "the replica that received the most"
    host = name_field(help_text="the master whose shards its replica takes over")
    to = replica_field("planned only: an emergency promotes the most advanced")
    emergency = forms.BooleanField(
        required=False,
        label="Emergency: the master is down",
        help_text="promote its most advanced replica; the old master goes out of service",
    )
    accept_data_loss = forms.BooleanField(
        required=False,
        label="Accept data loss",
        help_text="emergency only: promote a replica that may lack acknowledged writes",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("accept_data_loss") and not data.get("emergency"):
            raise forms.ValidationError("accepting data loss goes with an emergency failover")
        if data.get("emergency") and data.get("to"):
            self.add_error("to", "a replica is chosen for a planned failover only: an emergency promotes the one that received the most")  # fmt: skip
        return data


class SplitForm(HandoverForm):
    to_default = "the first replica the map names"
    host = name_field(help_text="the master whose replica takes over half of its shards")
    to = replica_field("it becomes the master of the moved half")


def failover_plan(made: Control, data: dict[str, Any]) -> Plan:
    """``shardstore failover HOST [--to REPLICA | --emergency [--accept-data-loss]]``."""
    if data["emergency"]:
        return plan_emergency_failover(
            made.source,
            host=data["host"],
            author=made.operator,
            fence=made.fence,
            connect=made.mysql,
            accept_data_loss=data["accept_data_loss"],
        )
    return plan_failover(
        made.source, host=data["host"], author=made.operator, to=data["to"] or None,
        connect=made.mysql,
    )  # fmt: skip


def split_plan(made: Control, data: dict[str, Any]) -> Plan:
    """``shardstore split HOST [--to REPLICA]``."""
    return plan_split(
        made.source, host=data["host"], author=made.operator, to=data["to"] or None,
        connect=made.mysql,
    )  # fmt: skip
