"""Operations left open by a run that died (``kill -9``, a recycled worker): the console
lists them with whether each still runs, and ends one as ``shardstore abort``/``resume``
does (shardstore/control/recovery.py), on a worker, with the destructive role and the
operator's password given again."""

from __future__ import annotations

from typing import Any

from celery.result import EagerResult
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from shardstore import ShardStoreError
from shardstore.control.documents import masked
from shardstore.control.recovery import ENDINGS, state

from ..errors import RateLimited
from . import reauth, roles
from .access import no_role, staff_required
from .console_actions import console_control
from .signed_tasks import ENDING, sign
from .tasks import end_operation

MAX_ID_DIGITS = 18


@staff_required
@require_safe
def open_operations(request: HttpRequest) -> HttpResponse:
    rows: list[dict[str, Any]] = []
    error = ""
    try:
        with console_control(request.user.get_username()) as made:
            rows = [{"op": op, "state": state(op, made.locks)} for op in made.journal.open_operations()]  # fmt: skip
    except ShardStoreError as failed:
        error = masked(str(failed))
    context = {
        "rows": rows,
        "error": error,
        "may_end": roles.may_end_operations(request.user),
        "ask_password": not reauth.confirmed_recently(request),
    }
    return render(request, "ops/operations.html", context, status=503 if error else 200)


@staff_required
@require_POST
def end(request: HttpRequest, operation_id: str, how: str) -> HttpResponse:
    if how not in ENDINGS or not (operation_id.isdigit() and len(operation_id) <= MAX_ID_DIGITS):
        raise Http404("no such operation or ending")
    if not roles.may_end_operations(request.user):
        return no_role(request, "destructive")
    try:
        confirmed = reauth.confirmed_recently(request) or reauth.confirm(
            request, request.POST.get("password")
        )
    except RateLimited as refused:
        messages.error(request, refused.message)
        return redirect("ops_operations")
    if not confirmed:
        messages.error(request, f"Give your password again to {how} operation {operation_id}.")
        return redirect("ops_operations")
    signed = sign(ENDING, request.user.get_username(), how, {"operation": int(operation_id)})
    queued = end_operation.delay(signed)
    if isinstance(queued, EagerResult):
        said = masked(str(queued.get()))
        (messages.error if said.startswith("FAILED") else messages.success)(request, said)
    else:
        messages.info(request, f"Queued for a worker: {how} operation {operation_id}.")
    return redirect("ops_operations")
