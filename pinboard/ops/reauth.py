"""Sudo mode for the console, and staff sessions that end after hours.

Running an action that changes the topology asks for the operator's password again
unless they gave it within the last ``settings.OPS_REAUTH_SECONDS`` (5 minutes), as
GitHub's sudo mode does: a session taken over, or a screen left unlocked, does not
fail a master over. Logging in to the staff log-in counts as giving it. A password
given again is counted as a log-in against the rate limits (per address and per
account).

A staff account's session lasts ``settings.OPS_SESSION_SECONDS`` (8 hours) from its
log-in, whatever the pinners' sessions last: then the console asks for the log-in again.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest

from .. import ratelimit

#: Session keys: when the staff account logged in, and last gave its password.
LOGGED_IN_AT = "ops_logged_in_at"
CONFIRMED_AT = "ops_password_confirmed_at"


def staff_account_key(username: str) -> str:
    """Where a staff account's password guesses are counted (``ratelimit``): at the name as
    the admin's log-in form reads it (Unicode's compatibility form, NFKC), so that
    "operator" in fullwidth letters, which logs in to ``operator``, is counted there too."""
    name = unicodedata.normalize("NFKC", username).strip().casefold()
    return f"staff:{hashlib.sha256(name.encode()).hexdigest()}"


class ExactUsernameBackend(ModelBackend):
    """Staff log-ins for the account named exactly: a control database on MySQL compares
    names ignoring case, accents and trailing spaces (``Opérator `` finds ``operator``), and
    guesses at such a name would be counted apart from the account's. (The password is
    checked first, so a refused name costs the hasher's time as any wrong password does.)"""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        user = super().authenticate(request, username, password, **kwargs)
        return user if user is not None and user.get_username() == username else None


@receiver(user_logged_in)
def _staff_logged_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is None or not getattr(user, "is_staff", False):
        return
    now = time.time()
    request.session[LOGGED_IN_AT] = request.session[CONFIRMED_AT] = now
    request.session.set_expiry(settings.OPS_SESSION_SECONDS)


def session_expired(request: HttpRequest) -> bool:
    """A staff session older than ``OPS_SESSION_SECONDS`` (or from before they were kept)."""
    logged_in = request.session.get(LOGGED_IN_AT)
    return not isinstance(logged_in, float | int) or (
        time.time() - logged_in > settings.OPS_SESSION_SECONDS
    )


def confirmed_recently(request: HttpRequest) -> bool:
    confirmed = request.session.get(CONFIRMED_AT)
    return isinstance(confirmed, float | int) and (
        time.time() - confirmed <= settings.OPS_REAUTH_SECONDS
    )


def confirm(request: HttpRequest, password: object) -> bool:
    """Check the operator's password again; True (and sudo mode from now) if it is theirs.
    RateLimited past the log-in limits."""
    user = request.user
    account = staff_account_key(user.get_username())
    ratelimit.check_password(request, account)
    if not isinstance(password, str) or not user.check_password(password):
        ratelimit.password_failed(request, account)
        return False
    request.session[CONFIRMED_AT] = time.time()
    return True
