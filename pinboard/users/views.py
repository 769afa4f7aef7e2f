"""Pages of pinners: landing, sign up, log in and out, password, settings (with the avatar),
profile, followers, following and likes."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any, cast

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from .. import ratelimit
from ..cache_backend import CacheUnreachable
from ..entities import User, pinner_stats
from ..errors import DomainError, WrongPassword
from ..feeds.home import read_home
from ..follows.queries import followed_among, followers_page, following_page, follows_user
from ..grid import pin_items
from ..http_errors import with_retry_after
from ..likes.queries import liked_pins
from ..pins.queries import pinners_and_boards
from ..views_common import form_errors, next_url, parse_cursor, pinner_required
from .actions import (
    authenticate,
    change_password,
    delete_account,
    remove_avatar,
    set_avatar,
    sign_up,
    update_profile,
)
from .auth import (
    get_pinner,
    keep_session_after_password_change,
    log_in,
    log_out,
    signed_in_pinner,
)
from .profile import read_profile
from .queries import get_user_by_username, get_users


def landing(request: HttpRequest) -> HttpResponse:
    """A pinner's home feed; for a visitor, the site's newest pins."""
    pinner = get_pinner(request)
    shown, cursor = read_home(pinner["id"] if pinner else None, cursor=parse_cursor(request))
    pinners, boards = pinners_and_boards(
        shown.pins, known_pinners=[pinner] if pinner else [], known_boards=shown.boards.values()
    )
    grid = {"pins": pin_items(shown.pins, pinners, boards), "next_cursor": cursor}
    if request.GET.get("partial"):
        return render(request, "pins/_grid.html", grid)
    return render(request, "users/home.html" if pinner else "users/landing.html", grid)


def signup(request: HttpRequest) -> HttpResponse:
    if get_pinner(request) is not None:
        return redirect("landing")

    def attempt() -> User:
        ratelimit.check(request, "signup")
        post = request.POST
        return sign_up(post.get("username"), post.get("email"), post.get("password"))

    return _entry_form(request, "users/signup.html", attempt)


def login(request: HttpRequest) -> HttpResponse:
    def attempt() -> User:
        with ratelimit.password_attempt(request, ratelimit.login_key(request.POST.get("login"))):
            user = authenticate(request.POST.get("login"), request.POST.get("password"))
            if user is None:
                raise WrongPassword("wrong username, email or password")
        return user

    return _entry_form(request, "users/login.html", attempt)


def _entry_form(request: HttpRequest, template: str, attempt: Callable[[], User]) -> HttpResponse:
    """The sign-up or log-in form: on a POST, ``attempt`` returns the pinner to log in (who
    is then sent on to ``next``) or raises what the form shows (a 429 with Retry-After)."""
    errors: dict[str, str] = {}
    status, refusal = 200, None
    if request.method == "POST":
        try:
            user = attempt()
        except DomainError as error:
            refusal, errors, status = error, form_errors(error), error.status
        else:
            log_in(request, user)
            return redirect(next_url(request, "/"))
    context = {"errors": errors, "values": request.POST, "next": next_url(request, "")}
    return with_retry_after(render(request, template, context, status=status), refusal)


@require_POST
def logout(request: HttpRequest) -> HttpResponse:
    log_out(request)  # (its session's Redis unreachable: a 503, from http_errors)
    return redirect("landing")


@pinner_required
def password(request: HttpRequest) -> HttpResponse:
    """Change the password: ends the pinner's other sessions and revokes their API tokens."""
    pinner = get_pinner(request)
    assert pinner is not None
    errors: dict[str, str] = {}
    status, refusal = 200, None
    if request.method == "POST":
        post = request.POST
        try:
            with ratelimit.password_attempt(request, ratelimit.pinner_key(pinner["id"])):
                user = change_password(
                    pinner["id"], post.get("old_password"), post.get("new_password")
                )
        except DomainError as error:
            refusal, errors, status = error, form_errors(error), error.status
        else:
            keep_session_after_password_change(request, user)
            messages.success(request, "Your password is changed; other sessions are logged out.")
            return redirect("profile", username=user["username"])
    response = render(request, "users/password.html", {"errors": errors}, status=status)
    return with_retry_after(response, refusal)


@pinner_required
def settings(request: HttpRequest) -> HttpResponse:
    """The pinner's display name and about text."""
    pinner = signed_in_pinner(request)
    errors: dict[str, str] = {}
    status = 200
    values: Mapping[str, Any] = pinner
    if request.method == "POST":
        values = request.POST
        changes = {"display_name": values.get("display_name", ""), "about": values.get("about", "")}
        try:
            user = update_profile(pinner["id"], changes)
        except DomainError as error:
            errors, status = form_errors(error), error.status
        else:
            messages.success(request, "Your profile is saved.")
            return redirect("profile", username=user["username"])
    context = {"errors": errors, "values": values}
    return render(request, "users/settings.html", context, status=status)


def _settings_refused(request: HttpRequest, error: DomainError, form: str) -> HttpResponse:
    """The settings page again, with ``error`` shown on its ``form`` ("avatar", "delete")."""
    context = {"errors": {}, f"{form}_errors": form_errors(error), "values": get_pinner(request)}
    response = render(request, "users/settings.html", context, status=error.status)
    return with_retry_after(response, error)


@require_POST
@pinner_required
def avatar(request: HttpRequest) -> HttpResponse:
    """Upload an avatar (the settings page's picture form); a refusal is shown there."""
    pinner = signed_in_pinner(request)
    try:
        ratelimit.check_pinner(pinner["id"], "avatar")  # before the image is decoded
        set_avatar(pinner["id"], request.FILES.get("image"))
    except DomainError as error:
        return _settings_refused(request, error, "avatar")
    messages.success(request, "Your picture is saved.")
    return redirect("settings")


@require_POST
@pinner_required
def avatar_remove(request: HttpRequest) -> HttpResponse:
    remove_avatar(signed_in_pinner(request)["id"])
    messages.success(request, "Your picture is removed: your initial shows instead.")
    return redirect("settings")


@require_POST
@pinner_required
def delete(request: HttpRequest) -> HttpResponse:
    """Delete the account (its password confirms it); the settings form shows a refusal."""
    pinner = signed_in_pinner(request)
    try:
        with ratelimit.password_attempt(request, ratelimit.pinner_key(pinner["id"])):
            delete_account(pinner["id"], request.POST.get("password"))
    except DomainError as error:
        return _settings_refused(request, error, "delete")
    with contextlib.suppress(CacheUnreachable):  # its sessions end with the account anyway
        log_out(request)
    messages.success(request, "Your account is deleted.")
    return redirect("landing")


def _profile_user(username: str) -> User:
    user = get_user_by_username(username)
    if user is None:
        raise Http404("no such pinner")
    return user


def _follow_state(request: HttpRequest, user: User) -> bool | None:
    """Whether the visitor follows ``user``; None when there is no button to show."""
    pinner = get_pinner(request)
    if pinner is None or pinner["id"] == user["id"]:
        return None
    return follows_user(pinner["id"], user["id"])


def profile(request: HttpRequest, username: str) -> HttpResponse:
    pinner = get_pinner(request)
    found = read_profile(username, pinner["id"] if pinner else None, parse_cursor(request))
    user = found.user
    context = {
        "profile": user,
        "stats": pinner_stats(user),
        "boards": found.boards,
        "secret_boards": found.secret_boards,
        "group_boards": found.group_boards,
        "next_cursor": found.next_cursor,
        "following": _follow_state(request, user),
    }
    return render(request, "users/profile.html", context)


class Person(User):
    """A pinner of a list of followers or followed, as the list shows them."""

    followed: bool  # by the visitor
    is_me: bool  # the visitor


def _people(request: HttpRequest, username: str, which: str) -> HttpResponse:
    user = _profile_user(username)
    list_page = followers_page if which == "followers" else following_page
    page = list_page(user["id"], cursor=parse_cursor(request))
    people = cast("list[Person]", get_users(page.ids))  # each marked below
    pinner = get_pinner(request)
    followed = set(followed_among(pinner["id"], page.ids)) if pinner and page.ids else set()
    for person in people:
        person["followed"] = person["id"] in followed
        person["is_me"] = pinner is not None and person["id"] == pinner["id"]
    context = {
        "profile": user,
        "stats": pinner_stats(user),
        "which": which,
        "people": people,
        "next_cursor": page.cursor,
        "following": _follow_state(request, user),
    }
    return render(request, "users/people.html", context)


def followers(request: HttpRequest, username: str) -> HttpResponse:
    return _people(request, username, "followers")


def following(request: HttpRequest, username: str) -> HttpResponse:
    return _people(request, username, "following")


def likes(request: HttpRequest, username: str) -> HttpResponse:
    user, pinner = _profile_user(username), get_pinner(request)
    viewer = pinner["id"] if pinner else None
    shown, cursor = liked_pins(viewer, user["id"], cursor=parse_cursor(request))
    pinners, boards = pinners_and_boards(
        shown.pins, known_pinners=[user], known_boards=shown.boards.values()
    )
    grid = {"pins": pin_items(shown.pins, pinners, boards), "next_cursor": cursor}
    if request.GET.get("partial"):
        return render(request, "pins/_grid.html", grid)
    context = {
        **grid,
        "profile": user,
        "stats": pinner_stats(user),
        "following": _follow_state(request, user),
    }
    return render(request, "users/likes.html", context)
