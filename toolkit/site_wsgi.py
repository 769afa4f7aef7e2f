"""The site as the local cluster serves it: ``pinboard.wsgi`` with its static files served by
Django, as ``manage.py runserver`` serves them.

The cluster runs gunicorn with no web server in front of it, and gunicorn serves no static
files of its own; in production the load balancer or a bucket serves them (``collectstatic``).
"""

import importlib

from django.contrib.staticfiles.handlers import StaticFilesHandler

# Imported by name: the toolkit's strict type check stays out of the Django project.
site = importlib.import_module("pinboard.wsgi").application
application = StaticFilesHandler(site)
