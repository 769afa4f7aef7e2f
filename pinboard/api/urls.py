"""The JSON API v1, mounted at /api/v1/ by pinboard.urls.

IDs in paths are captured as strings so that a malformed or wrong-type ID
reaches the view and becomes a JSON 404; anything unmatched is a JSON 404 too.
"""

from django.urls import path, re_path

from . import http, openapi
from .views import (
    auth,
    avatar,
    boards,
    collaborators,
    feed,
    notifications,
    pins,
    search,
    users,
)

urlpatterns = [
    path("openapi.json", openapi.document, name="api-openapi"),
    path("auth/token", auth.token, name="api-token"),
    path("me", users.me, name="api-me"),
    path("me/password", users.password, name="api-me-password"),
    path("me/secret-boards", users.secret_boards, name="api-me-secret-boards"),
    path("me/avatar", avatar.avatar, name="api-me-avatar"),
    path("feed", feed.feed, name="api-feed"),
    path("notifications", notifications.notifications, name="api-notifications"),
    path("notifications/read", notifications.read, name="api-notifications-read"),
    path("search", search.search, name="api-search"),
    path("users", users.users, name="api-users"),
    path("users/by-username/<str:username>", users.by_username, name="api-user-by-username"),
    path("users/<str:user_id>", users.user, name="api-user"),
    path("users/<str:user_id>/boards", users.boards, name="api-user-boards"),
    path("users/<str:user_id>/followers", users.followers, name="api-user-followers"),
    path("users/<str:user_id>/following", users.following, name="api-user-following"),
    path("users/<str:user_id>/likes", users.likes, name="api-user-likes"),
    path(
        "users/<str:user_id>/group-boards",
        collaborators.group_boards,
        name="api-user-group-boards",
    ),
    path("users/<str:user_id>/follows", users.follows, name="api-user-follows"),
    path("users/<str:user_id>/follow", users.follow, name="api-user-follow"),
    path("boards", boards.boards, name="api-boards"),
    path("boards/<str:board_id>", boards.board, name="api-board"),
    path("boards/<str:board_id>/pins", boards.pins, name="api-board-pins"),
    path("boards/<str:board_id>/follow", boards.follow, name="api-board-follow"),
    path(
        "boards/<str:board_id>/collaborators",
        collaborators.collaborators,
        name="api-board-collaborators",
    ),
    path(
        "boards/<str:board_id>/collaborators/<str:user_id>",
        collaborators.collaborator,
        name="api-board-collaborator",
    ),
    path(
        "boards/<str:board_id>/invitation",
        collaborators.invitation,
        name="api-board-invitation",
    ),
    path("pins", pins.pins, name="api-pins"),
    path("pins/from-url", pins.pins_from_url, name="api-pins-from-url"),
    path("pins/<str:pin_id>", pins.pin, name="api-pin"),
    path("pins/<str:pin_id>/save", pins.save, name="api-pin-save"),
    path("pins/<str:pin_id>/like", pins.like, name="api-pin-like"),
    path("pins/<str:pin_id>/likes", pins.likes, name="api-pin-likes"),
    path("pins/<str:pin_id>/comments", pins.comments, name="api-pin-comments"),
    path("pins/<str:pin_id>/comments/<str:comment_id>", pins.comment, name="api-pin-comment"),
    re_path(r"", http.not_found),  # everything else under /api/v1/
]
