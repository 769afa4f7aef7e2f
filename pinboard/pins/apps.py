from django.apps import AppConfig


class PinsConfig(AppConfig):
    name = "pinboard.pins"
