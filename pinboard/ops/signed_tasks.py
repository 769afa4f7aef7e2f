"""The console's tasks carry a request the web view signed, and the worker checks it again.

Whoever can write to the broker could otherwise queue a console action as any operator:
roles and sudo mode are the web view's. So the view, once it has checked the role and
the password, signs what it hands over (``django.core.signing``, keyed by the site's
``SECRET_KEY``, which the workers share, under a salt of its own): the operator, the
action and its form's data with the plan's digest (or the operation and how it ends),
and a nonce. Before anything runs the worker checks that the signature holds, that it
was signed within ``lifetime()`` (5 minutes, never more than the sudo window), that the
nonce was never taken before (``SignedTaskUse``: a message sent again runs nothing), and
that the operator is an active staff account holding the role *now*. The plan is made
again and compared with the signed digest by ``console_actions.run_confirmed``. A refusal
is journaled as a failure that changed nothing, naming why.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.db import IntegrityError, transaction
from django.utils import timezone

from . import roles
from .control import journal_not_run
from .models import SignedTaskUse

SALT = "pinboard.ops.signed_tasks"
#: How long a signed request may wait for a worker, at most (and never past sudo mode's).
LIFETIME_SECONDS = 5 * 60
#: What a request asks: a console action, or the end of an operation left open.
ACTION, ENDING = "action", "ending"
#: Who a refused request is journaled as when its signature does not say.
UNSIGNED = "(no valid signature)"
#: Used nonces are kept this long, far past any request they could stop.
KEEP_USES = timedelta(days=1)


@dataclass(frozen=True)
class Request:
    task: str  # ACTION or ENDING
    operator: str
    name: str  # the action's name, or how the operation ends (abort, resume, close)
    data: dict[str, Any]  # the action's form data, or {"operation": its journal id}
    digest: str  # the plan the operator confirmed ("" for an ending)
    nonce: str

    @property
    def summary(self) -> str:
        if self.task == ENDING:
            return f"{self.name} operation {self.data.get('operation')}"
        return f"console action {self.name}"


class Refused(Exception):
    """A request the worker does not run, and why."""

    def __init__(self, why: str, request: Request | None = None) -> None:
        super().__init__(why)
        self.why, self.request = why, request

    def journaled(self) -> int:
        """Journal the refusal (a failure that changed nothing); the entry's id."""
        if self.request is None:
            return journal_not_run("console-task", "a console task", UNSIGNED, self.why)
        asked = self.request
        return journal_not_run(asked.name, asked.summary, asked.operator, self.why)


def lifetime() -> int:
    return min(LIFETIME_SECONDS, settings.OPS_REAUTH_SECONDS)


def sign(task: str, operator: str, name: str, data: dict[str, Any], digest: str = "") -> str:
    """The web view's request, signed for a worker."""
    request = Request(task, operator, name, data, digest, secrets.token_hex(16))
    return signing.TimestampSigner(salt=SALT).sign_object(asdict(request))


def opened(token: object, task: str) -> Request:
    """The request ``token`` signs, once its signature, age, nonce and operator's role are
    checked again; ``Refused`` otherwise."""
    signer = signing.TimestampSigner(salt=SALT)
    try:
        request = Request(**signer.unsign_object(str(token)))
    except (signing.BadSignature, TypeError, ValueError) as bad:
        raise Refused("bad signature: not a request the console signed") from bad
    try:
        signer.unsign(str(token), max_age=lifetime())
    except signing.SignatureExpired as late:
        why = f"expired: signed over {lifetime()} s ago; confirm it again"
        raise Refused(why, request) from late
    if request.task != task:
        raise Refused(f"signed for another task ({request.task})", request)
    claim(request)  # before the role: a request refused once is never run later
    refuse_unless_allowed(request)
    return request


def claim(request: Request) -> None:
    """Take the request's nonce, or refuse it: it was taken before (a replayed message)."""
    SignedTaskUse.objects.filter(used_at__lt=timezone.now() - KEEP_USES).delete()
    try:
        with transaction.atomic():
            SignedTaskUse.objects.create(nonce=request.nonce)
    except IntegrityError as taken:
        raise Refused("replayed: this signed request was used already", request) from taken


def refuse_unless_allowed(request: Request) -> None:
    """The operator as they are now: an active staff account holding the role it takes."""
    found = get_user_model().objects.filter(username=request.operator).first()
    # Exactly that name: a control database on MySQL compares names ignoring case.
    if found is None or found.get_username() != request.operator:
        raise Refused(f"no staff account {request.operator} any more", request)
    if not (found.is_active and found.is_staff):
        raise Refused(f"{request.operator} is no longer an active staff account", request)
    if request.task == ENDING:
        allowed, role = roles.may_end_operations(found), "destructive"
    else:
        allowed, role = roles.may_run(found, request.name), roles.role_needed(request.name)
    if not allowed:
        raise Refused(f"role gone: {request.operator} no longer holds the {role} role", request)
