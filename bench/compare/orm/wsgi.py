"""The WSGI application for gunicorn: ``gunicorn bench.compare.orm.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.compare.orm.settings")
application = get_wsgi_application()
