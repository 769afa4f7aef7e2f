"""The console actions' forms: what an operator fills in for each (pinboard/ops/console_actions.py;
failover's and split's, which offer the map's replicas, are in handover.py).

Every field is bounded (names, numbers, a published document's size and depth), so a
form refuses what a planner should never see.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.validators import RegexValidator

from shardstore.control import documents
from shardstore.control.cli_restore import target
from shardstore.control.config_source import ConfigError
from shardstore.durability import MAX_DEGRADE_SECONDS
from shardstore.ids import MAX_SHARD_ID
from shardstore.redis_shards import VSHARDS

from ..api.http import nested_deeper_than
from ..catalog import CACHE_POOLS

NAME = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", "letters, digits, '.', '_' or '-' (at most 64)"
)
MAX_DOCUMENT = 256 * 1024
MAX_DEPTH = 32


def name_field(**options: Any) -> forms.CharField:
    return forms.CharField(max_length=64, validators=[NAME], **options)


class OpenRangeForm(forms.Form):
    count = forms.IntegerField(
        min_value=1, max_value=MAX_SHARD_ID + 1, help_text="new shards, after the last one"
    )
    master = name_field(help_text="the new master's name, e.g. MySQL009A")
    master_address = forms.CharField(
        max_length=500, help_text="mysql://host:port (sqlite:///directory on the embedded default)"
    )
    replica = name_field(required=False, help_text="its first replica's name (optional)")
    replica_address = forms.CharField(max_length=500, required=False)
    second_replica = name_field(required=False, help_text="its second replica's name (optional)")
    second_replica_address = forms.CharField(max_length=500, required=False)
    keep_open = forms.BooleanField(
        required=False, label="Keep the open ranges open too", help_text="else only the new one is"
    )

    def clean_master_address(self) -> str:
        return self._no_password("master_address")

    def clean_replica_address(self) -> str:
        return self._no_password("replica_address")

    def clean_second_replica_address(self) -> str:
        return self._no_password("second_replica_address")

    @staticmethod
    def replicas_of(data: dict[str, Any]) -> dict[str, str]:
        """The replicas a cleaned form names, by name: their addresses."""
        named = [(data["replica"], data["replica_address"]), (data["second_replica"], data["second_replica_address"])]  # fmt: skip
        return {name: address for name, address in named if name}

    def _no_password(self, name: str) -> str:
        """An address without a password (the form shown again shows it masked)."""
        value: str = self.cleaned_data[name]
        if documents.masked(value) != value:
            self.data = {**{key: self.data.get(key) for key in self.data}, name: documents.masked(value)}  # fmt: skip
            raise forms.ValidationError(
                "the address holds a password: a shard map holds none (the site logs in as"
                " PINBOARD_MYSQL_LOGIN)"
            )
        return value


class CloseRangeForm(forms.Form):
    first = forms.IntegerField(min_value=0, max_value=MAX_SHARD_ID)
    last = forms.IntegerField(min_value=0, max_value=MAX_SHARD_ID)


class BackupNowForm(CloseRangeForm):
    """A range of the map, to back up."""


class DurabilityForm(forms.Form):
    first = forms.IntegerField(min_value=0, max_value=MAX_SHARD_ID, help_text="a range of the map")
    last = forms.IntegerField(min_value=0, max_value=MAX_SHARD_ID)
    policy = forms.ChoiceField(
        choices=[
            ("strict", "strict: no commit without a replica's acknowledgement"),
            ("degrade", "degrade-after: asynchronous once no replica acknowledged in time"),
        ]
    )
    seconds = forms.IntegerField(
        min_value=1, max_value=MAX_DEGRADE_SECONDS, required=False,
        help_text="degrade-after: how long a commit waits first",
    )  # fmt: skip

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("policy") == "degrade" and not data.get("seconds"):
            raise forms.ValidationError("degrade-after needs its seconds")
        return data


class RestoreShardForm(forms.Form):
    shard = forms.IntegerField(min_value=0, max_value=MAX_SHARD_ID)
    to = forms.CharField(max_length=32, help_text="the second to restore it as of, UTC: 2026-11-29T08:30:00Z")  # fmt: skip
    into = name_field(help_text="a host of the map that serves no range (a spare)")
    copy_back = forms.BooleanField(required=False, help_text="write the rows deleted since back into the live shard")  # fmt: skip

    def clean_to(self) -> float:
        try:
            when, gtid = target(self.cleaned_data["to"])
        except ConfigError as exc:
            raise forms.ValidationError(str(exc)) from None
        if when is None or gtid is not None:
            raise forms.ValidationError("a time, UTC: 2026-11-29T08:30:00Z")
        return when


class GuardPauseForm(forms.Form):
    state = forms.ChoiceField(
        choices=[("pause", "pause it: dead masters wait for a person"), ("unpause", "let it act")]
    )
    reason = forms.CharField(max_length=200, help_text="why, for the journal")


class HostServiceForm(forms.Form):
    host = name_field()
    service = forms.ChoiceField(
        choices=[("out", "take it out of service"), ("in", "put it back in service")]
    )


class CacheServerForm(forms.Form):
    pool = forms.ChoiceField(choices=[(name, name) for name in CACHE_POOLS])
    server = forms.CharField(
        max_length=260,
        validators=[RegexValidator(r"^[A-Za-z0-9_.:\[\]-]+:[0-9]{1,5}$", "host:port")],
        help_text="host:port of a memcached server",
    )
    change = forms.ChoiceField(choices=[("add", "add it to the pool"), ("remove", "remove it")])


class RedisMoveForm(forms.Form):
    first = forms.IntegerField(min_value=0, max_value=VSHARDS - 1, label="First virtual shard")
    last = forms.IntegerField(min_value=0, max_value=VSHARDS - 1, label="Last virtual shard")
    instance = name_field(help_text="the instance that will serve them")
    url = forms.CharField(
        max_length=500, required=False, help_text="redis://host:port/db, if the instance is new"
    )


class DiffForm(forms.Form):
    a = name_field(label="Host A")
    b = name_field(label="Host B")
    first = forms.IntegerField(
        min_value=0, max_value=MAX_SHARD_ID, required=False, label="First shard",
        help_text="empty: every shard either host masters",
    )  # fmt: skip
    last = forms.IntegerField(min_value=0, max_value=MAX_SHARD_ID, required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if (data.get("first") is None) != (data.get("last") is None):
            raise forms.ValidationError("give both the first and the last shard, or neither")
        return data


class ReopenForm(forms.Form):
    host = name_field(help_text="the master to make writable again (read-only since it restarted)")


class RebuildForm(forms.Form):
    host = name_field(help_text="the host to wipe and make a replica (never a master)")
    master = name_field(
        required=False, help_text="its master, only if the map cannot tell (several candidates)"
    )
    max_threads_running = forms.IntegerField(
        min_value=1,
        max_value=10_000,
        initial=32,
        help_text="the copy pauses while the master runs more statements than this",
    )


class SplitNumberForm(forms.Form):
    split = forms.IntegerField(
        min_value=1, max_value=10**9, help_text="the shard-map version the split published"
    )


class CleanupForm(SplitNumberForm):
    without_backup = forms.BooleanField(required=False, help_text="drop the copies though no backup of the moved shards exists")  # fmt: skip


DOCUMENT_CHOICES = [(name, name) for name in documents.NAMES]


class PublishForm(forms.Form):
    document = forms.ChoiceField(choices=DOCUMENT_CHOICES)
    body = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false"}),
        max_length=MAX_DOCUMENT,
        strip=False,
        label="Document (JSON)",
        help_text="its version is set when it is published",
    )
    reason = forms.CharField(max_length=500)
    expect_version = forms.IntegerField(
        min_value=0,
        max_value=10**9,
        required=False,
        help_text="publish only if this is still the current version",
    )

    def clean_body(self) -> dict[str, Any]:
        text = self.cleaned_data["body"]
        if nested_deeper_than(text, MAX_DEPTH):
            raise forms.ValidationError(f"nested more than {MAX_DEPTH} deep")
        try:
            document = json.loads(text)
            json.dumps(document, ensure_ascii=False).encode()  # no lone surrogates
        except (ValueError, UnicodeEncodeError) as exc:
            raise forms.ValidationError(f"not valid JSON: {exc}") from None
        if not isinstance(document, dict):
            raise forms.ValidationError("a document is a JSON object")
        return document


class RollbackForm(forms.Form):
    document = forms.ChoiceField(choices=DOCUMENT_CHOICES)
    version = forms.IntegerField(min_value=1, max_value=10**9, label="Back to version")
    reason = forms.CharField(max_length=500)
