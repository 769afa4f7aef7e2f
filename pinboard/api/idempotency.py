"""``Idempotency-Key`` on the API's creates: a client that sends the key with a POST that
makes an object, and sends the same request again with it (it got no answer, or a 503),
gets the object the first attempt made, never a second one.

A key is the pinner's (two pinners' keys never meet), kept a day
(``settings.IDEMPOTENCY_KEY_SECONDS``), and names one request: its method, path and body
(a hash of them). Sent with another request it is refused (422) and nothing is written; a
malformed key is a 400. Where keys are kept, and why a commit given up on is found all the
same, is shardstore's (``shardstore/idempotency.py``); here, for each keyed request:

1. the key is claimed for the request, on the pinner's shard;
2. if the same request claimed it before (a retry), the shard the object goes to is asked
   what an earlier attempt made: if it made one, that object is the answer (``resume``);
3. otherwise the handler runs, and its action makes the object and the key's row in one
   transaction (``key_of``); if an earlier attempt's transaction commits meanwhile, this
   one is rolled back and the earlier object is the answer.

The answer for an object an earlier attempt made is built as the first would have been,
from the object as it is now, once the steps the earlier attempt may not have got to
(listing it, telling followers: each harmless to take again) are taken: the same status,
the same object. An object deleted since is a 404. A key sent where no create takes one
is ignored.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any, cast

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from shardstore import AlreadyCreated, IdempotencyKey, InvalidKey
from shardstore.idempotency import MAX_KEY_LENGTH

from ..data_plane import cached_store
from ..errors import BadRequest
from .http import require_pinner

HEADER = "Idempotency-Key"
_ATTRIBUTE = "idempotency_key"

#: ``(request, **path)`` -> the shard the endpoint's new object goes to, and what of the
#: request names that object (its body as parsed): refusing a malformed request as the
#: handler would.
Target = Callable[..., tuple[int, object]]
#: ``(request, object_id, **path)`` -> the endpoint's answer for an object an earlier
#: attempt made, the steps of the create it may not have got to taken.
Resume = Callable[..., HttpResponse]
Handler = Callable[..., HttpResponse]


def idempotent(target: Target, resume: Resume) -> Callable[[Handler], Handler]:
    """Make a create handler honour ``Idempotency-Key`` (its action takes ``key_of``)."""

    def wrap(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def keyed(request: HttpRequest, **path: str) -> HttpResponse:
            sent = request.headers.get(HEADER)
            if sent is None:
                return handler(request, **path)
            pinner = require_pinner(request)
            shard_id, content = target(request, **path)
            asked = fingerprint(request.method or "", request.path, content)
            key = _key(pinner["id"], sent, asked)
            keys = cached_store().idempotency_keys()
            if not keys.claim(key):  # sent before: what did that attempt make?
                earlier = keys.created(shard_id, key)
                if earlier is not None:
                    return resume(request, earlier, **path)
            setattr(request, _ATTRIBUTE, key)
            try:
                return handler(request, **path)
            except AlreadyCreated as made:  # an earlier attempt's commit landed meanwhile
                return resume(request, made.object_id, **path)

        keyed.idempotent = True  # type: ignore[attr-defined]  # operations.takes_idempotency_key
        return keyed

    return wrap


def key_of(request: HttpRequest) -> IdempotencyKey | None:
    """The key a keyed create's action writes with its object (None without one)."""
    return cast("IdempotencyKey | None", getattr(request, _ATTRIBUTE, None))


def _key(pinner_id: int, sent: str, request_hash: str) -> IdempotencyKey:
    try:
        return IdempotencyKey(
            pinner_id, sent, request_hash, seconds=settings.IDEMPOTENCY_KEY_SECONDS
        )
    except InvalidKey:
        raise BadRequest(
            f"the {HEADER} header must be 1 to {MAX_KEY_LENGTH} printable ASCII characters"
        ) from None


def fingerprint(method: str, path: str, content: object) -> str:
    """The hash of what a request asks: its method, path and ``content`` (its body as
    parsed, so a retry that orders the same JSON fields otherwise is the same request)."""
    text = json.dumps([method, path, content], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def form_content(fields: Any, files: Any) -> dict[str, object]:
    """A multipart body's content: its fields, and each file by the hash of its bytes (the
    boundary between parts differs from one sending to the next)."""
    return {
        "fields": {name: fields.getlist(name) for name in fields},
        "files": {name: [_digest(upload) for upload in files.getlist(name)] for name in files},
    }


def _digest(upload: Any) -> str:
    digest = hashlib.sha256()
    for chunk in upload.chunks():
        digest.update(chunk)
    upload.seek(0)  # for the handler, which reads it again
    return digest.hexdigest()


def header_parameter() -> Mapping[str, object]:
    """The header in the OpenAPI document of each operation that takes it."""
    hours = settings.IDEMPOTENCY_KEY_SECONDS / 3600
    kept = f"{hours:g} hours" if hours != 24 else "a day"
    return {
        "name": HEADER,
        "in": "header",
        "required": False,
        "description": "A key of yours (a UUID, say) naming this request, so that it may be"
        " sent again after no answer or a 503 without making a second object: sent again"
        " with the same method, path and body, it is answered with the object the first"
        " attempt made (the same status and ID), even when that attempt's commit landed"
        f" after it failed. Kept {kept}, per pinner. Sent with another request, it is"
        " refused (422 `idempotency_key_reused`) and nothing is written; a new request"
        " needs a new key.",
        "schema": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_KEY_LENGTH,
            "pattern": "^[\\x20-\\x7e]+$",
        },
    }
