from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    """Pinners' notifications: who liked, saved or commented on their pins, followed them
    or their boards."""

    name = "pinboard.notifications"
