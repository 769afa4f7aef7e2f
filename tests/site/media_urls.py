"""The site's URLconf with media served as under DEBUG (``pinboard.media``), so tests can
ask what an image URL answers (``@pytest.mark.urls("tests.site.media_urls")``)."""

from django.urls import re_path

from pinboard.media import public_media
from pinboard.urls import urlpatterns as site_urlpatterns

urlpatterns = [
    re_path(r"^media/(?P<path>.*)$", public_media),
    *site_urlpatterns,
]
