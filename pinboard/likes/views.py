"""Like and unlike buttons on pins."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..ids import parse_id
from ..users.auth import signed_in_pinner
from ..views_common import act, pinner_required
from .actions import like as like_pin
from .actions import unlike as unlike_pin


@require_POST
@pinner_required
def like(request: HttpRequest, pin_id: str) -> HttpResponse:
    me, pin = signed_in_pinner(request)["id"], parse_id(pin_id, "pin")
    return act(request, lambda: like_pin(me, pin), reverse("pin", args=[pin]))


@require_POST
@pinner_required
def unlike(request: HttpRequest, pin_id: str) -> HttpResponse:
    me, pin = signed_in_pinner(request)["id"], parse_id(pin_id, "pin")
    return act(request, lambda: unlike_pin(me, pin), reverse("pin", args=[pin]))
