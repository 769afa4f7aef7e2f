"""The site's URLconf with media served as under DEBUG (``django.views.static.serve``), so
tests can ask what an image URL answers (``@pytest.mark.urls("tests.site.media_urls")``)."""

from django.conf import settings
from django.urls import re_path
from django.views.static import serve

from pinboard.urls import urlpatterns as site_urlpatterns

urlpatterns = [
    re_path(r"^media/(?P<path>.*)$", serve, {"document_root": settings.MEDIA_ROOT}),
    *site_urlpatterns,
]
