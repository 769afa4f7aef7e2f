"""The console's actions, one flow for all: form -> dry-run plan -> confirm -> run -> journal.

See ``console_actions.py`` for the registry and what each step guarantees.
"""

from __future__ import annotations

from typing import Any

from celery.result import EagerResult
from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from shardstore import ShardStoreError
from shardstore.control.config_source import SourceUnavailable, VersionConflict
from shardstore.control.documents import masked
from shardstore.control.locks import HostsBusy
from shardstore.control.plans import Plan

from ..errors import RateLimited
from . import reauth, roles
from .access import no_role, staff_required
from .console_actions import ACTIONS, Action, console_control, digest, dry_run
from .models import JournalEntry
from .queries.config import classified
from .signed_tasks import ACTION, sign
from .tasks import run_action

PLAN, RUN = "plan", "run"


def status_of(error: ShardStoreError) -> int:
    """Someone else got there first: 409; the config source is down: 503; else bad input."""
    if isinstance(error, VersionConflict | HostsBusy):
        return 409
    if isinstance(error, SourceUnavailable):
        return 503
    return 400


@staff_required
@require_safe
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "ops/actions.html", {"actions": ACTIONS.values()})


@staff_required
@require_http_methods(["GET", "HEAD", "POST"])
def action(request: HttpRequest, action: str) -> HttpResponse:
    chosen = ACTIONS.get(action)
    if chosen is None:
        raise Http404(f"no console action {action[:40]!r}")
    if request.method != "POST":
        return _blank_form(request, chosen)
    if not roles.may_run(request.user, chosen.name):  # not even a dry run
        return no_role(request, roles.role_needed(chosen.name))
    form = chosen.form(request.POST)
    if chosen.options is None and not form.is_valid():  # refused without the control plane
        return _form_page(request, chosen, form, status=400)
    operator = request.user.get_username()
    try:
        with console_control(operator) as made:
            if chosen.options is not None:  # its choices (and what it accepts) are the map's
                form = chosen.form_for(made, request.POST)
                if not form.is_valid():
                    return _form_page(request, chosen, form, status=400)
            plan = chosen.planner(made, form.cleaned_data)
            if request.POST.get("step") == RUN and request.POST.get("digest") == digest(plan):
                try:
                    confirmed = _password_confirmed(request, chosen)
                except RateLimited as refused:
                    page = _plan_page(request, chosen, form, plan, None, error=refused.message)
                    page.status_code, page["Retry-After"] = 429, str(refused.retry_after)
                    return page
                if not confirmed:
                    error = "give your password again to run it"
                    return _plan_page(request, chosen, form, plan, None, error=error, status=403)
                try:  # a busy host is shown here, and the same plan confirmed again
                    with made.locks.hold(plan.locks, owner=f"{operator}: {plan.operation}"):
                        pass
                except HostsBusy as busy:
                    return _plan_page(request, chosen, form, plan, None, error=str(busy))
                data = {name: request.POST[name] for name in form.fields if name in request.POST}
                signed = sign(ACTION, operator, chosen.name, data, digest(plan))
                return _ran(request, plan, run_action.delay(signed))
            changed = request.POST.get("step") == RUN  # confirmed, but the plan is not that one
            entry = dry_run(plan, made).entry
            return _plan_page(request, chosen, form, plan, entry, changed=changed)
    except ShardStoreError as error:
        form.add_error(None, masked(str(error)))
        return _form_page(request, chosen, form, status=status_of(error))


def _ran(request: HttpRequest, plan: Plan, queued: Any) -> HttpResponse:
    """Where the operator goes once the run is handed to a worker: its journal entry if it
    has run already (no broker: tasks run at once), else the journal, which shows it."""
    if not isinstance(queued, EagerResult):
        messages.info(request, masked(f"Queued for a worker: {plan.summary}. The journal shows its steps as they run."))  # fmt: skip
        return redirect("ops_journal")
    entry = JournalEntry.objects.get(pk=queued.get())
    if entry.ok:
        messages.success(request, masked(f"Done: {plan.summary}"))
    else:
        messages.error(request, masked(f"Failed: {entry.result}"))
    return redirect("ops_journal_entry", entry_id=entry.pk)


def _password_confirmed(request: HttpRequest, chosen: Action) -> bool:
    """Sudo mode: an action that changes the topology runs only if the operator gave their
    password within the last few minutes, or gives it now (``reauth.py``)."""
    if chosen.name in roles.READ_ONLY or reauth.confirmed_recently(request):
        return True
    return reauth.confirm(request, request.POST.get("password"))


def _blank_form(request: HttpRequest, chosen: Action) -> HttpResponse:
    query = {key: request.GET[key] for key in request.GET}
    if chosen.prefill is None and chosen.options is None:
        return _form_page(request, chosen, chosen.form(initial=chosen.initial(None, query)))
    try:
        with console_control(request.user.get_username()) as made:
            form = chosen.form_for(made, initial=chosen.initial(made, query))
    except ShardStoreError as error:
        form = chosen.form(initial=chosen.initial(None, query))
        return _form_page(request, chosen, form, status=status_of(error), error=str(error))
    return _form_page(request, chosen, form)


def _form_page(
    request: HttpRequest, chosen: Action, form: forms.Form, *, status: int = 200, error: str = ""
) -> HttpResponse:
    context = {"action": chosen, "form": form, "error": masked(error)}
    return render(request, "ops/action_form.html", context, status=status)


def _plan_page(
    request: HttpRequest,
    chosen: Action,
    form: forms.Form,
    plan: Plan,
    entry: Any,
    *,
    changed: bool = False,
    error: str = "",
    status: int | None = None,
) -> HttpResponse:
    context = {
        "action": chosen,
        "form": form,
        "plan": plan,
        "diff": classified(masked(str(plan.params.get("diff", "")))),
        "digest": digest(plan),
        "entry": entry,
        "changed": changed,
        "error": masked(error),
        "ask_password": chosen.name not in roles.READ_ONLY
        and not reauth.confirmed_recently(request),
    }
    status = status or (409 if error else 200)
    return render(request, "ops/action_plan.html", context, status=status)
