from django.apps import AppConfig


class FollowsConfig(AppConfig):
    name = "pinboard.follows"
