"""pinboard's paths: the API endpoints this build serves, then the pages, pinners' last."""

from django.urls import include, path, re_path

from . import api, page_views, views

api_v1 = [
    path("feed", views.feed),
    path("users/<str:user_id>", views.user),
    path("users/<str:user_id>/boards", views.user_boards),
    path("users/<str:user_id>/follow", views.user_follow),
    path("boards/<str:board_id>", views.board),
    path("boards/<str:board_id>/pins", views.board_pins),
    path("pins/<str:pin_id>", views.pin),
    path("pins/<str:pin_id>/save", views.pin_save),
    path("pins/<str:pin_id>/like", views.pin_like),
    path("pins/<str:pin_id>/likes", views.pin_likes),
    path("pins/<str:pin_id>/comments", views.pin_comments),
    re_path(r"", api.no_endpoint),  # everything else under /api/v1/
]

# Pages are named as pinboard names them, for its templates' links; those the comparison
# does not serve are not_in_this_build.
urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("", page_views.not_in_this_build, name="landing"),
    path("signup/", page_views.not_in_this_build, name="signup"),
    path("login/", page_views.not_in_this_build, name="login"),
    path("search/", page_views.not_in_this_build, name="search"),
    path("pin/<str:pin_id>/", page_views.pin, name="pin"),
    path("<str:username>/", page_views.profile, name="profile"),
    path("<str:username>/followers/", page_views.not_in_this_build, name="followers"),
    path("<str:username>/following/", page_views.not_in_this_build, name="following"),
    path("<str:username>/likes/", page_views.not_in_this_build, name="likes"),
    path("<str:username>/<str:slug>/", page_views.board, name="board"),
]
