"""The console's actions: what an operator can change from /ops/, as a registry.

Each ``Action`` is a name, a form (what the operator fills in) and a planner
(the form's data -> a ``shardstore.control`` plan, called as
``shardstore/control/cli.py``'s ``plan_of`` calls it from command-line
arguments). The views do the same for every action:

1. the form, posted as "plan": the planner builds the plan, ``run(...,
   dry_run=True)`` journals it as a dry run, and the page shows its exact
   steps and hosts, with a confirm button;
2. confirmed ("run"): the plan is built again from the same data; if it is
   no longer the plan the operator saw (someone published in between), the
   new one is shown to confirm instead; else it runs under the control's
   host locks, journaled, as the operator.

Planner errors (an invalid map, a version conflict, nothing published, the
config source down, a busy host...) are ``ShardStoreError``s, shown on the
form.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django import forms

from shardstore import InvalidTopology, ShardStoreError
from shardstore.control import documents
from shardstore.control.cache_servers import plan_cache_server
from shardstore.control.close_range import plan_close_range
from shardstore.control.config_source import NotPublished
from shardstore.control.context import Control
from shardstore.control.diff import plan_diff
from shardstore.control.host_service import plan_host_service
from shardstore.control.open_range import plan_open_range
from shardstore.control.plans import Outcome, Plan, run
from shardstore.control.publish import plan_publish, plan_rollback
from shardstore.control.rebuild import plan_rebuild
from shardstore.control.redis_move import plan_redis_move
from shardstore.control.split_cleanup import plan_cleanup
from shardstore.control.split_revert import plan_split_revert
from social.redis_keys import REDIS_KEYS

from .control import control, journal_not_run, progress_note
from .forms import (
    CacheServerForm,
    CleanupForm,
    CloseRangeForm,
    DiffForm,
    HostServiceForm,
    OpenRangeForm,
    PublishForm,
    RebuildForm,
    RedisMoveForm,
    RollbackForm,
    SplitNumberForm,
)
from .handover import FailoverForm, SplitForm, failover_plan, replica_options, split_plan

Planner = Callable[[Control, dict[str, Any]], Plan]
#: The form's first values, from the control and the page's query string.
Prefill = Callable[[Control, dict[str, str]], dict[str, Any]]
#: The form's keyword arguments read from the control plane (the choices it offers).
Options = Callable[[Control], dict[str, Any]]


@dataclass(frozen=True)
class Action:
    name: str  # its URL: /ops/actions/<name>/
    title: str
    description: str  # what it does, shown above its form
    form: type[forms.Form]
    planner: Planner
    prefill: Prefill | None = None
    options: Options | None = None

    def form_for(self, made: Control, *args: Any, **kwargs: Any) -> forms.Form:
        """Its form, offering what the control plane holds (``options``)."""
        options = self.options(made) if self.options else {}
        return self.form(*args, **{**kwargs, **options})

    def initial(self, made: Control | None, query: dict[str, str]) -> dict[str, Any]:
        """The form's first values: fields named in the query string, then the prefill's."""
        initial: dict[str, Any] = {k: v for k, v in query.items() if k in self.form.base_fields}
        if self.prefill is not None and made is not None:
            initial.update(self.prefill(made, initial))
        return initial


ACTIONS: dict[str, Action] = {}


def register(action: Action) -> Action:
    if action.name in ACTIONS:
        raise ValueError(f"two console actions are called {action.name}")
    ACTIONS[action.name] = action
    return action


@contextmanager
def console_control(operator: str) -> Iterator[Control]:
    """The control plane (config source, locks, journal), acting for a staff user."""
    made = control(operator)
    try:
        yield made
    finally:
        made.source.close()


def dry_run(plan: Plan, made: Control) -> Outcome:
    """Journal the plan as a dry run: nothing changes."""
    return run(plan, journal=made.journal, locks=made.locks, operator=made.operator, dry_run=True)


def execute(plan: Plan, made: Control) -> Outcome:
    """Run the plan under its hosts' locks, journaled."""
    return run(plan, journal=made.journal, locks=made.locks, operator=made.operator)


def run_confirmed(name: str, data: dict[str, Any], operator: str, confirmed: str) -> int:
    """Plan the action ``name`` again from its form's ``data`` and run it if it is still the
    plan whose digest is ``confirmed``; the journal entry's id (a plan that changed, or
    cannot be made any more, is journaled as a failure that changed nothing)."""
    chosen = ACTIONS[name]
    with console_control(operator) as made:
        try:
            form = chosen.form_for(made, data)
            if not form.is_valid():
                raise InvalidTopology(f"the form is no longer valid: {form.errors.as_text()}")
            plan = chosen.planner(made, form.cleaned_data)
            if digest(plan) != confirmed:
                raise InvalidTopology("the plan changed after it was confirmed: plan it again")
        except ShardStoreError as error:
            return journal_not_run(name, chosen.title, operator, str(error))
        return int(execute(plan, made).entry.pk)


def digest(plan: Plan) -> str:
    """What an operator confirms: the plan's steps, hosts and config diff, as one hash."""
    shown = [plan.operation, plan.summary, *plan.lines(), str(plan.params.get("diff", ""))]
    return hashlib.sha256("\n".join(shown).encode()).hexdigest()


# -- the actions -------------------------------------------------------------------

register(
    Action(
        "open-range",
        "Open a new shard range",
        "Create the shard databases and tables of new shards at the end of the map on a new "
        "master (on MySQL: its replicas set to follow it first, then the master opened for "
        "writes), add the range to the shard map and send new sign-ups there. Existing "
        "users never move.",
        OpenRangeForm,
        lambda made, data: plan_open_range(
            made.source,
            made.connect,
            count=data["count"],
            master=data["master"],
            master_address=data["master_address"],
            replicas=OpenRangeForm.replicas_of(data),
            keep_open=data["keep_open"],
            author=made.operator,
            mysql=made.mysql,
        ),
    )
)
register(
    Action(
        "close-range",
        "Close a range to new users",
        "Publish the shard map without these shards among the open ranges: new sign-ups stop "
        "landing there; the pinners already there stay.",
        CloseRangeForm,
        lambda made, data: plan_close_range(
            made.source, first=data["first"], last=data["last"], author=made.operator
        ),
    )
)
register(
    Action(
        "host-service",
        "Mark a host out of service, or back",
        "A host out of service stays in the map but is nobody's replica, so no failover "
        "promotes it. A master cannot be taken out: fail it over first.",
        HostServiceForm,
        lambda made, data: plan_host_service(
            made.source,
            host=data["host"],
            in_service=data["service"] == "in",
            author=made.operator,
        ),
    )
)
register(
    Action(
        "cache-server",
        "Add or remove a memcached server",
        "Adding checks the server answers and empties it, then publishes the pool's new "
        "server list; removing publishes it without the server. Keys move by rendezvous "
        "hashing: a miss each.",
        CacheServerForm,
        lambda made, data: plan_cache_server(
            made.source,
            pool=data["pool"],
            server=data["server"],
            add=data["change"] == "add",
            author=made.operator,
        ),
    )
)
register(
    Action(
        "redis-move",
        "Move a Redis virtual-shard range",
        "Copy the keys of the virtual shards to the instance, publish the Redis map, wait for "
        "every process to switch, repair the moved pinners' graph from MySQL, then delete "
        "the old copies.",
        RedisMoveForm,
        lambda made, data: plan_redis_move(
            made.source,
            made.store(),
            first=data["first"],
            last=data["last"],
            instance=data["instance"],
            url=data["url"] or None,
            author=made.operator,
            keys=REDIS_KEYS,
        ),
    )
)


register(
    Action(
        "failover",
        "Fail a master over to its replica",
        "Planned (to the replica chosen, by default the one that received the most): check "
        "the replicas are caught up, make the master read-only and wait until no write lands, "
        "wait for the replicas to apply everything (GTID), publish the map with the chosen "
        "one as master, make it writable, and make the old master and the other replicas its "
        "replicas. Emergency "
        "(the master is down for the operator and every replica, or answers but no replica "
        "receives from it): fence it (if it answers: read-only, its sessions ended), promote the "
        "replica that received every acknowledged write once it has applied all it received, "
        "publish, and keep the old master out of service until it is rebuilt. Refused when no "
        "replica can be shown to hold every acknowledged write, unless data loss is accepted.",
        FailoverForm,
        failover_plan,
        options=replica_options,
    )
)


register(
    Action(
        "diff",
        "Compare the shards of two hosts",
        "Row counts and checksums of every table of the shards on both hosts, read at one "
        "GTID position when one replicates from the other (so a difference is real, not "
        "lag). Changes nothing; the journal keeps the report.",
        DiffForm,
        lambda made, data: plan_diff(
            made.source,
            a=data["a"],
            b=data["b"],
            shards=None if data["first"] is None else (data["first"], data["last"]),
            connect=made.mysql,
        ),
    )
)
register(
    Action(
        "split",
        "Split a host onto its replica",
        "The replica chosen (by default the first the map names) becomes the master of the "
        "second half of the host's shards, the host keeping its other replicas: the moving "
        "shards are compared on both (rows and checksums, at one GTID position), made "
        "read-only for the seconds the switch takes (the other shards never stop), and "
        "handed over; replication between the two ends. The host keeps the moved shards, "
        "replicated back from their new master (fenced for the site) so that a revert takes "
        "seconds; the replica's copies of the staying shards are renamed, not dropped, until "
        "the split is cleaned up.",
        SplitForm,
        split_plan,
        options=replica_options,
    )
)
register(
    Action(
        "split-revert",
        "Revert a split",
        "Until it is cleaned up, and only while the host's reverse stream runs healthy: make "
        "the moved shards read-only (for a second or two, whatever they hold), wait until the "
        "host has applied the replica's last writes, and publish the old ranges. The replica "
        "goes out of service until it is rebuilt as a replica.",
        SplitNumberForm,
        lambda made, data: plan_split_revert(
            made.source, split=data["split"], author=made.operator, connect=made.mysql
        ),
    )
)
register(
    Action(
        "cleanup",
        "Clean up after a split",
        "Stop the split's reverse stream and drop the copies it left on both hosts. The split "
        "cannot be reverted after this, so it is refused unless each range now holding the "
        "moved shards has a master that answers and a backup taken since the split (or "
        "'without backup' is ticked: the journal says so).",
        CleanupForm,
        lambda made, data: plan_cleanup(
            made.source,
            split=data["split"],
            author=made.operator,
            connect=made.mysql,
            store=made.backups,
            without_backup=data["without_backup"],
        ),
    )
)
register(
    Action(
        "rebuild",
        "Rebuild a host as a replica",
        "Wipe the host's shard databases, copy its master's from one consistent snapshot "
        "while writes go on (paused while the master is busy), replicate from the copy's "
        "GTID position until caught up, make the master wait for its acknowledgements, and "
        "publish it as the master's replica, back in service. Refused for a master.",
        RebuildForm,
        lambda made, data: plan_rebuild(
            made.source,
            host=data["host"],
            author=made.operator,
            connect=made.mysql,
            master=data["master"] or None,
            max_threads_running=data["max_threads_running"],
            say=lambda line: progress_note("rebuild", data["host"], line),
        ),
    )
)


def current_document(made: Control, initial: dict[str, Any]) -> dict[str, Any]:
    """The publish form starts from the document in force and its version."""
    name = initial.get("document")
    if name not in documents.NAMES:
        name = documents.SHARDS
    try:
        revision = made.source.current(name)
    except NotPublished:
        return {"document": name, "expect_version": 0}
    # Masked, as on every page: an old map's password is refused on publishing, not shown.
    body = json.dumps(documents.masked(revision.document), indent=2, sort_keys=True)
    return {"document": name, "body": body, "expect_version": revision.version}


register(
    Action(
        "publish",
        "Publish a config document",
        "Validate a document and publish it as the next version (compare-and-set on the "
        "version it was edited from). Every process swaps it in within a second.",
        PublishForm,
        lambda made, data: plan_publish(
            made.source,
            data["document"],
            data["body"],
            author=made.operator,
            reason=data["reason"],
            expect_version=data["expect_version"],
            connect=made.mysql,
        ),
        prefill=current_document,
    )
)
register(
    Action(
        "rollback",
        "Roll back a config document",
        "Publish an earlier version of a document again, as a new version (history only grows).",
        RollbackForm,
        lambda made, data: plan_rollback(
            made.source,
            data["document"],
            data["version"],
            author=made.operator,
            reason=data["reason"],
            connect=made.mysql,
        ),
    )
)
