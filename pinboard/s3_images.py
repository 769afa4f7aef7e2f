"""The image storage on S3 (``prod``: pinboard/settings/s3.py): each file is one PutObject
that S3 itself refuses should the name be taken (a conditional write, ``If-None-Match: *``),
and a refused name is tried again with a suffix, as Django's storages do.

django-storages asks first whether a name is taken (a HeadObject per file) unless told to
overwrite. No role may list the bucket, and the web role may not read ``pins/`` or
``avatars/``, so S3 answers that question 403, not 404, and every upload failed; nor may a
file be overwritten, as another upload's pins may show it (image_files.py). A conditional
write needs ``s3:PutObject`` only, the permission the write needs anyway.
"""

from __future__ import annotations

import os
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from storages.backends.s3 import S3Storage
from storages.utils import clean_name

#: What a call to an image storage raises that a later try may get past: a local file's
#: error, S3 unreachable or refusing (throttled, a role or key being changed). A task that
#: moves or deletes files retries on them all: given up, it would leave a file public.
STORAGE_ERRORS: tuple[type[Exception], ...] = (OSError, BotoCoreError, ClientError)
#: S3's answers to a conditional write whose name is taken, or being taken at that moment.
TAKEN = frozenset({"PreconditionFailed", "ConditionalRequestConflict"})
#: Names tried for one file: names carry random bits, so one is taken only by chance.
ATTEMPTS = 5


class ImageStorage(S3Storage):  # type: ignore[misc]  # django-storages ships no types
    def get_available_name(self, name: str, max_length: int | None = None) -> str:
        """The name as asked: whether it is free is S3's to say, at the write (``_save``)."""
        return str(clean_name(name))

    def _save(self, name: str, content: Any) -> str:
        params = self._get_write_parameters(name, content)
        content.seek(0)
        body = content.read()
        for _ in range(ATTEMPTS):
            name = str(clean_name(name))
            try:
                self.connection.meta.client.put_object(
                    Bucket=self.bucket_name,
                    Key=self._normalize_name(name),
                    Body=body,
                    IfNoneMatch="*",
                    **params,
                )
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") not in TAKEN:
                    raise
                root, extension = os.path.splitext(name)
                name = self.get_alternative_name(root, extension)
            else:
                return name
        raise FileExistsError(f"no free name for {name} after {ATTEMPTS} tries")
