from django.apps import AppConfig


class BoardsConfig(AppConfig):
    name = "pinboard.boards"
