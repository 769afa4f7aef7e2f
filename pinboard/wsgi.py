"""The WSGI application. Each server process (a gunicorn worker imports this after the fork)
starts its data plane at once, so it follows the config from its start, not its first request
(and derives the embedded default's in-process Redis there)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pinboard.settings.dev")
application = get_wsgi_application()

from pinboard.data_plane import start  # noqa: E402 - after Django is set up

start()
