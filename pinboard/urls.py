"""The site's URLs. Fixed first segments come first; ``<username>/...`` catches the rest.

Every fixed first segment here is a reserved username (users.actions), so no
pinner's profile can hide one of these pages.
"""

from django.contrib import admin
from django.urls import include, path

from . import media
from .boards import views as boards
from .follows import views as follows
from .likes import views as likes
from .notifications import views as notifications
from .ops import health
from .pins import views as pins
from .search import views as search
from .users import views as users

urlpatterns = [
    path("", users.landing, name="landing"),
    path("signup/", users.signup, name="signup"),
    path("login/", users.login, name="login"),
    path("logout/", users.logout, name="logout"),
    path("settings/", users.settings, name="settings"),
    path("settings/password/", users.password, name="password_change"),
    path("settings/avatar/", users.avatar, name="avatar_upload"),
    path("settings/avatar/remove/", users.avatar_remove, name="avatar_remove"),
    path("settings/delete/", users.delete, name="account_delete"),
    path("boards/new/", boards.create, name="board_new"),
    path("boards/<str:board_id>/edit/", boards.edit, name="board_edit"),
    path("boards/<str:board_id>/delete/", boards.delete, name="board_delete"),
    path("boards/<str:board_id>/follow/", boards.follow, name="board_follow"),
    path("boards/<str:board_id>/unfollow/", boards.unfollow, name="board_unfollow"),
    path("boards/<str:board_id>/collaborators/", boards.add_member, name="board_add_member"),
    path(
        "boards/<str:board_id>/collaborators/<str:user_id>/remove/",
        boards.remove_member,
        name="board_remove_member",
    ),
    path(
        "boards/<str:board_id>/invitation/<str:answer>/",
        boards.answer_invitation,
        name="board_invitation",
    ),
    path("search/", search.search, name="search"),
    path("pin/new/", pins.create, name="pin_new"),
    path("pin/<str:pin_id>/", pins.detail, name="pin"),
    path("pin/<str:pin_id>/image/<str:variant>/", pins.image, name="pin_image"),
    path("pin/<str:pin_id>/edit/", pins.edit, name="pin_edit"),
    path("pin/<str:pin_id>/delete/", pins.delete, name="pin_delete"),
    path("pin/<str:pin_id>/save/", pins.save, name="pin_save"),
    path("pin/<str:pin_id>/comment/", pins.comment, name="pin_comment"),
    path(
        "pin/<str:pin_id>/comments/<str:comment_id>/delete/",
        pins.remove_comment,
        name="pin_comment_delete",
    ),
    path("pin/<str:pin_id>/like/", likes.like, name="pin_like"),
    path("pin/<str:pin_id>/unlike/", likes.unlike, name="pin_unlike"),
    path("notifications/", notifications.notifications, name="notifications"),
    path("users/<str:user_id>/follow/", follows.follow, name="user_follow"),
    path("users/<str:user_id>/unfollow/", follows.unfollow, name="user_unfollow"),
    path("api/v1/", include("pinboard.api.urls")),
    path("healthz", health.healthz, name="healthz"),  # liveness: up or not, nothing more
    path("readyz", health.readyz, name="readyz"),  # the load balancer's (config versions)
    path("ops/", include("pinboard.ops.urls")),  # the operators' console (staff only)
    path("admin/", admin.site.urls),  # operators' accounts, the journal (staff only)
    *media.public_media_urls(),  # DEBUG only
    # -- pinners' pages: keep these last ---------------------------------------
    path("<str:username>/", users.profile, name="profile"),
    path("<str:username>/followers/", users.followers, name="followers"),
    path("<str:username>/following/", users.following, name="following"),
    path("<str:username>/likes/", users.likes, name="likes"),
    path("<str:username>/<str:slug>/", boards.detail, name="board"),
]

handler500 = "pinboard.http_errors.server_error"
