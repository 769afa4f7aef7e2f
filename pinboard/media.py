"""Media served by the site itself under DEBUG (the embedded default; production serves them
from S3): public files only. A secret board's pins' files (``image_files.PRIVATE``) are a
404 here: ``pins.views.image`` serves them to those who may see the pin."""

from __future__ import annotations

import posixpath

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponseBase
from django.urls import URLPattern, re_path
from django.views.static import serve

from .image_files import is_private


def public_media(request: HttpRequest, path: str) -> HttpResponseBase:
    # The name as ``serve`` resolves it (``./``, ``../`` and ``//`` gone), checked and served:
    # checked as it came, ``./private/...`` or ``pins/../private/...`` would pass. Checked in
    # any case too: on a disk that ignores case (macOS's), ``PRIVATE/...`` is the same file.
    name = posixpath.normpath(path).lstrip("/")
    if is_private(name.casefold()):
        raise Http404("no such file")
    return serve(request, name, document_root=str(settings.MEDIA_ROOT))


def public_media_urls() -> list[URLPattern]:
    """The media route, as ``django.conf.urls.static.static`` gives it: under DEBUG only."""
    if not settings.DEBUG:
        return []
    prefix = settings.MEDIA_URL.lstrip("/")
    return [re_path(rf"^{prefix}(?P<path>.*)$", public_media)]
