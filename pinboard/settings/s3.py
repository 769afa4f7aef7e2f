"""The image storages on S3 (``prod`` with ``PINBOARD_S3_BUCKET``), in one place: the tests
run the site's storage calls with the options production uses (tests/site/s3_roles.py).
Each file is stored by one conditional PutObject (pinboard/s3_images.py)."""

from __future__ import annotations

from typing import Any

#: How long a signed URL to a secret board's image lives, and a shared cache keeps a public
#: one: the longest an image answers once the site has stopped showing it (docs/deploy.md).
SIGNED_SECONDS = 300


def s3_storages(
    bucket: str, region: str | None, media_domain: str | None, **connection: Any
) -> dict[str, dict[str, Any]]:
    """``STORAGES`` for images in ``bucket``. ``connection``: options added to each S3
    storage's (the tests' endpoint and keys; production's hosts take their role's)."""
    return {
        "default": {
            "BACKEND": "pinboard.s3_images.ImageStorage",
            "OPTIONS": {
                "bucket_name": bucket,
                "region_name": region,
                "custom_domain": media_domain,
                "querystring_auth": False,  # pin images are public
                # Never rewritten: a browser keeps a file for good. A shared cache (CloudFront,
                # whose policy caps it too: infra/terraform/modules/media) for as long as a
                # signed URL lives, so that a file deleted stops answering within that.
                "object_parameters": {
                    "CacheControl": f"public, max-age=31536000, s-maxage={SIGNED_SECONDS}, immutable"
                },
                **connection,
            },
        },
        # A secret board's pins' files (image_files.PRIVATE): in the same bucket, which the
        # media domain does not serve (infra/terraform/modules/media), through URLs signed for
        # minutes, never cached by the public.
        "private": {
            "BACKEND": "pinboard.s3_images.ImageStorage",
            "OPTIONS": {
                "bucket_name": bucket,
                "region_name": region,
                "querystring_auth": True,
                "querystring_expire": SIGNED_SECONDS,
                "object_parameters": {"CacheControl": "private, max-age=300"},
                **connection,
            },
        },
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
