"""The OpenAPI 3.0 document of the JSON API v1, served at /api/v1/openapi.json.

Built from small tables so that every operation lists the errors it can
return: the fuzz test (tests/site/test_api_fuzz.py) checks each response's
status and body against this document, so a drift between it and the views
fails the suite.
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse

from ..boards.actions import MAX_DESCRIPTION as MAX_BOARD_DESCRIPTION
from ..boards.actions import MAX_NAME
from ..pins.actions import MAX_COMMENT, MAX_LINK
from ..pins.actions import MAX_DESCRIPTION as MAX_PIN_DESCRIPTION
from ..pins.images import MAX_BYTES
from ..users.actions import MIN_PASSWORD
from .http import DEFAULT_LIMIT, MAX_JSON_BYTES, MAX_JSON_DEPTH, MAX_LIMIT, endpoint
from .views.users import MAX_FOLLOWS_IDS


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def string(max_length: int | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", **extra}
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    schema["required"] = list(properties) if required is None else required
    if not schema["required"]:
        del schema["required"]
    return schema


def list_of(item: str) -> dict[str, Any]:
    return obj(
        {
            "items": {"type": "array", "items": ref(item)},
            "next": {
                "type": "string",
                "nullable": True,
                "description": "The cursor of the next page; null on the last page.",
            },
        }
    )


COUNT = {"type": "integer", "minimum": 0}
ID = {
    "type": "string",
    "pattern": "^(0|[1-9][0-9]{0,19})$",
    "description": "A 64-bit object ID as a decimal string (IDs exceed 2^53): ASCII digits,"
    " no sign, spaces or leading zeros.",
    "example": "241294492511762325",
}
TIMESTAMP = {"type": "string", "description": "ISO 8601 date and time, UTC."}
USER_PROPERTIES = {
    "id": ref("Id"),
    "username": string(30),
    "about": string(500),
    "follower_count": COUNT,
    "following_count": COUNT,
    "board_count": COUNT,
    "pin_count": COUNT,
}
BOARD_NAME = string(
    MAX_NAME,
    minLength=1,
    pattern="[A-Za-z0-9]",
    description="At least one letter or digit (the board's URL slug is made from it).",
)
PIN_LINK = string(MAX_LINK, nullable=True, description="An http(s) URL; empty or null for none.")
BOARD_DESCRIPTION = string(MAX_BOARD_DESCRIPTION, nullable=True, description="Null means empty.")
PIN_DESCRIPTION = string(MAX_PIN_DESCRIPTION, nullable=True, description="Null means empty.")

SCHEMAS: dict[str, Any] = {
    "Id": ID,
    "Error": obj(
        {
            "error": obj(
                {
                    "code": string(
                        description="Machine-readable: bad_request, unauthenticated, forbidden,"
                        " not_found, method_not_allowed, conflict, too_large, invalid,"
                        " rate_limited, unavailable."
                    ),
                    "message": string(description="For people."),
                    "field": string(description="The request field at fault, if one is."),
                },
                required=["code", "message"],
            )
        }
    ),
    "User": obj(USER_PROPERTIES),
    "Me": obj({**USER_PROPERTIES, "email": string(254, format="email")}),
    "Board": obj(
        {
            "id": ref("Id"),
            "owner_id": ref("Id"),
            "name": string(MAX_NAME),
            "slug": string(),
            "description": string(MAX_BOARD_DESCRIPTION),
            "pin_count": COUNT,
            "follower_count": {
                **COUNT,
                "description": "Explicit followers of the board plus followers of its owner,"
                " less those who unfollowed this board.",
            },
        }
    ),
    "Pin": obj(
        {
            "id": ref("Id"),
            "board_id": ref("Id"),
            "owner_id": ref("Id"),
            "description": string(MAX_PIN_DESCRIPTION),
            "link": string(MAX_LINK),
            "image_url": string(description="URL of the image (JPEG, at most 1600 px a side)."),
            "thumbnail_url": string(description="URL of a 236 px wide thumbnail."),
            "width": {"type": "integer", "minimum": 1, "nullable": True},
            "height": {"type": "integer", "minimum": 1, "nullable": True},
            "like_count": COUNT,
            "save_count": COUNT,
            "comment_count": COUNT,
            "saved_from": {
                **ID,
                "nullable": True,
                "description": "For a save (repin): the pin it was saved from.",
            },
            "created_at": TIMESTAMP,
        }
    ),
    "Comment": obj(
        {
            "id": ref("Id"),
            "pin_id": ref("Id"),
            "author": {
                "allOf": [ref("User")],
                "nullable": True,
                "description": "Null if the author's account is gone.",
            },
            "text": string(MAX_COMMENT),
            "created_at": TIMESTAMP,
        }
    ),
    "UserList": list_of("User"),
    "BoardList": list_of("Board"),
    "PinList": list_of("Pin"),
    "CommentList": list_of("Comment"),
    "Token": obj(
        {
            "token": string(
                description="`<token ID>.<secret>`: send as `Authorization: Token <token>`."
                " Shown only here: the server keeps a hash of the secret."
            ),
            "expires_at": {**TIMESTAMP, "description": "When the token stops being accepted."},
        }
    ),
    "FollowedIds": obj({"ids": {"type": "array", "items": ref("Id")}}),
}

ERRORS = {
    "400": "Malformed request: not JSON, wrong content type, a missing or unknown field,"
    f" a bad `limit` or `cursor`, a JSON body over {MAX_JSON_BYTES // 1024} KiB or nested"
    f" more than {MAX_JSON_DEPTH} deep.",
    "401": "No token, or a bad one (`Authorization: Token <token>`).",
    "403": "The object is not yours.",
    "404": "Unknown ID, or an ID that is malformed or of another type.",
    "409": "The username or email is taken.",
    "413": f"Too large: an image over {MAX_BYTES // (1024 * 1024)} MB, or the request body.",
    "422": "A field's value is invalid; `error.field` names it.",
    "429": "Too many attempts (log-in and sign-up per client address, new and saved pins per"
    " pinner); `Retry-After` says how many seconds until the limit resets.",
    "503": "A storage host is unavailable, or the data is moving to another host; nothing"
    " was written. `Retry-After` says when to try again.",
}

#: Headers that come with an error status, by status.
ERROR_HEADERS = {
    "429": {
        "Retry-After": {
            "description": "Seconds until the rate limit's window ends.",
            "required": True,
            "schema": {"type": "integer", "minimum": 1},
        }
    },
    "503": {
        "Retry-After": {
            "description": "Seconds after which the request may succeed.",
            "required": True,
            "schema": {"type": "integer", "minimum": 1},
        }
    },
}

PARAMETERS = {
    "user_id": {"name": "user_id", "in": "path", "required": True, "schema": ref("Id")},
    "board_id": {"name": "board_id", "in": "path", "required": True, "schema": ref("Id")},
    "pin_id": {"name": "pin_id", "in": "path", "required": True, "schema": ref("Id")},
    "limit": {
        "name": "limit",
        "in": "query",
        "required": False,
        "description": f"Page size, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}).",
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
    },
    "cursor": {
        "name": "cursor",
        "in": "query",
        "required": False,
        "description": "The `next` of the previous page.",
        "schema": {"type": "string", "minLength": 1, "maxLength": 64},
    },
}

TOKEN_AUTH = [{"token": []}]


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def operation(
    summary: str,
    *,
    ok: tuple[str, str | None],
    errors: str,
    auth: bool = False,
    path: str | None = None,
    paged: bool = False,
    body: dict[str, Any] | None = None,
    query: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``ok``: (status, schema name or None for no body); ``errors``: statuses, e.g. "400 404"."""
    status, schema = ok
    success: dict[str, Any] = {"description": summary}
    if schema is not None:
        success["content"] = {"application/json": {"schema": ref(schema)}}
    statuses = set(errors.split()) | {"503"}
    if auth:
        statuses.add("401")
    if body is not None:
        statuses |= {"400", "413"}
    if paged:
        statuses.add("400")
    responses = {status: success}
    for code in sorted(statuses):
        responses[code] = {"$ref": f"#/components/responses/E{code}"}
    op: dict[str, Any] = {"summary": summary, "responses": responses}
    parameters = [{"$ref": f"#/components/parameters/{path}"}] if path else []
    if paged:
        parameters += [{"$ref": "#/components/parameters/limit"}]
        parameters += [{"$ref": "#/components/parameters/cursor"}]
    parameters += query or []
    if parameters:
        op["parameters"] = parameters
    if body is not None:
        op["requestBody"] = body
    op["security"] = TOKEN_AUTH if auth else []
    return op


NEW_PASSWORD = string(
    256,
    minLength=MIN_PASSWORD,
    description=f"At least {MIN_PASSWORD} characters, not a common password, not all digits,"
    " not too like the username or email (else a 422 naming the field).",
)


def paths() -> dict[str, Any]:
    user_list = ("200", "UserList")
    return {
        "/api/v1/auth/token": {
            "post": operation(
                "Trade a username (or email) and password for an API token that expires"
                f" after {token_lifetime()}",
                ok=("200", "Token"),
                errors="401 422 429",
                body=json_body(
                    obj(
                        {
                            "username": string(description="Username or email."),
                            "password": string(),
                        },
                        additionalProperties=False,
                    )
                ),
            ),
            "delete": operation(
                "Revoke the token sent with this request: it gets a 401 from then on",
                ok=("204", None),
                errors="",
                auth=True,
            ),
        },
        "/api/v1/me/password": {
            "post": operation(
                "Change your password; every API token of yours, this one too, is revoked",
                ok=("204", None),
                errors="422 429",
                auth=True,
                body=json_body(
                    obj(
                        {"old_password": string(), "new_password": NEW_PASSWORD},
                        additionalProperties=False,
                    )
                ),
            )
        },
        "/api/v1/users": {
            "post": operation(
                "Sign up",
                ok=("201", "User"),
                errors="409 422 429",
                body=json_body(
                    obj(
                        {
                            "username": string(30, pattern="^[A-Za-z0-9_]{3,30}$"),
                            "email": string(254, format="email"),
                            "password": NEW_PASSWORD,
                        },
                        additionalProperties=False,
                    )
                ),
            )
        },
        "/api/v1/me": {
            "get": operation(
                "The pinner of the token, with email", ok=("200", "Me"), errors="404", auth=True
            )
        },
        "/api/v1/feed": {
            "get": operation(
                "The pinner's home feed: pins from followed pinners and boards, newest first",
                ok=("200", "PinList"),
                errors="",
                auth=True,
                paged=True,
            )
        },
        "/api/v1/users/by-username/{username}": {
            "get": operation(
                "A pinner by username (case-insensitive)",
                ok=("200", "User"),
                errors="404",
                query=[{"name": "username", "in": "path", "required": True, "schema": string()}],
            )
        },
        "/api/v1/users/{user_id}": {
            "get": operation("A pinner", ok=("200", "User"), errors="404", path="user_id")
        },
        "/api/v1/users/{user_id}/boards": {
            "get": operation(
                "A pinner's boards, newest first",
                ok=("200", "BoardList"),
                errors="404",
                path="user_id",
                paged=True,
            )
        },
        "/api/v1/users/{user_id}/followers": {
            "get": operation(
                "Who follows the pinner, newest first",
                ok=user_list,
                errors="404",
                path="user_id",
                paged=True,
            )
        },
        "/api/v1/users/{user_id}/following": {
            "get": operation(
                "Whom the pinner follows, newest first",
                ok=user_list,
                errors="404",
                path="user_id",
                paged=True,
            )
        },
        "/api/v1/users/{user_id}/follows": {
            "get": operation(
                f"Which of up to {MAX_FOLLOWS_IDS} given users the pinner follows (one query);"
                " a malformed or non-user ID in `ids` is a 400",
                ok=("200", "FollowedIds"),
                errors="400 404",
                path="user_id",
                query=[
                    {
                        "name": "ids",
                        "in": "query",
                        "required": True,
                        "description": f"Up to {MAX_FOLLOWS_IDS} user IDs separated by commas.",
                        "schema": {
                            "type": "string",
                            "pattern": "^((0|[1-9][0-9]{0,19})(,(0|[1-9][0-9]{0,19}))*)?$",
                        },
                    }
                ],
            )
        },
        "/api/v1/users/{user_id}/follow": {
            "put": operation(
                "Follow the pinner (and so all their boards, present and future)",
                ok=("204", None),
                errors="404 422",
                auth=True,
                path="user_id",
            ),
            "delete": operation(
                "Unfollow the pinner (and so all their boards)",
                ok=("204", None),
                errors="404",
                auth=True,
                path="user_id",
            ),
        },
        "/api/v1/boards": {
            "post": operation(
                "Create a board",
                ok=("201", "Board"),
                errors="422",
                auth=True,
                body=json_body(
                    obj(
                        {"name": BOARD_NAME, "description": BOARD_DESCRIPTION},
                        required=["name"],
                        additionalProperties=False,
                    )
                ),
            )
        },
        "/api/v1/boards/{board_id}": {
            "get": operation("A board", ok=("200", "Board"), errors="404", path="board_id"),
            "patch": operation(
                "Edit your board",
                ok=("200", "Board"),
                errors="403 404 422",
                auth=True,
                path="board_id",
                body=json_body(
                    obj(
                        {"name": BOARD_NAME, "description": BOARD_DESCRIPTION},
                        required=[],
                        additionalProperties=False,
                    )
                ),
            ),
            "delete": operation(
                "Delete your board and its pins",
                ok=("204", None),
                errors="403 404",
                auth=True,
                path="board_id",
            ),
        },
        "/api/v1/boards/{board_id}/pins": {
            "get": operation(
                "A board's pins, newest first",
                ok=("200", "PinList"),
                errors="404",
                path="board_id",
                paged=True,
            )
        },
        "/api/v1/boards/{board_id}/follow": {
            "put": operation(
                "Follow the board",
                ok=("204", None),
                errors="404 422",
                auth=True,
                path="board_id",
            ),
            "delete": operation(
                "Unfollow the board (recorded as a board unfollow if you follow its owner)",
                ok=("204", None),
                errors="404",
                auth=True,
                path="board_id",
            ),
        },
        "/api/v1/pins": {
            "post": operation(
                "Pin an image to one of your boards",
                ok=("201", "Pin"),
                errors="403 404 422 429",
                auth=True,
                body={
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": obj(
                                {
                                    "board_id": ref("Id"),
                                    "description": string(MAX_PIN_DESCRIPTION),
                                    "link": string(MAX_LINK, description="An http(s) URL."),
                                    "image": string(
                                        format="binary",
                                        description="JPEG, PNG, GIF or WebP, at most"
                                        f" {MAX_BYTES // (1024 * 1024)} MB; checked by content.",
                                    ),
                                },
                                required=["board_id", "image"],
                                additionalProperties=False,
                            )
                        }
                    },
                },
            )
        },
        "/api/v1/pins/{pin_id}": {
            "get": operation("A pin", ok=("200", "Pin"), errors="404", path="pin_id"),
            "patch": operation(
                "Edit your pin, or move it to another of your boards",
                ok=("200", "Pin"),
                errors="403 404 422",
                auth=True,
                path="pin_id",
                body=json_body(
                    obj(
                        {
                            "description": PIN_DESCRIPTION,
                            "link": PIN_LINK,
                            "board_id": ref("Id"),
                        },
                        required=[],
                        additionalProperties=False,
                    )
                ),
            ),
            "delete": operation(
                "Delete your pin",
                ok=("204", None),
                errors="403 404",
                auth=True,
                path="pin_id",
            ),
        },
        "/api/v1/pins/{pin_id}/save": {
            "post": operation(
                "Save (repin) the pin to one of your boards: a new pin with `saved_from`",
                ok=("201", "Pin"),
                errors="403 404 422 429",
                auth=True,
                path="pin_id",
                body=json_body(
                    obj(
                        {
                            "board_id": ref("Id"),
                            "description": string(
                                MAX_PIN_DESCRIPTION,
                                nullable=True,
                                description="Null or absent: the source pin's description.",
                            ),
                        },
                        required=["board_id"],
                        additionalProperties=False,
                    )
                ),
            )
        },
        "/api/v1/pins/{pin_id}/like": {
            "put": operation(
                "Like the pin", ok=("204", None), errors="404", auth=True, path="pin_id"
            ),
            "delete": operation(
                "Unlike the pin", ok=("204", None), errors="404", auth=True, path="pin_id"
            ),
        },
        "/api/v1/pins/{pin_id}/likes": {
            "get": operation(
                "Who liked the pin, newest first",
                ok=user_list,
                errors="404",
                path="pin_id",
                paged=True,
            )
        },
        "/api/v1/pins/{pin_id}/comments": {
            "get": operation(
                "The pin's comments, oldest first",
                ok=("200", "CommentList"),
                errors="404",
                path="pin_id",
                paged=True,
            ),
            "post": operation(
                "Comment on the pin",
                ok=("201", "Comment"),
                errors="404 422",
                auth=True,
                path="pin_id",
                body=json_body(
                    obj(
                        {"text": string(MAX_COMMENT, minLength=1, pattern=r"\S")},
                        additionalProperties=False,
                    )
                ),
            ),
        },
    }


def token_lifetime() -> str:
    """settings.API_TOKEN_SECONDS for people: "30 days", "12 hours", "90 seconds"."""
    seconds = settings.API_TOKEN_SECONDS
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


@functools.cache
def build() -> dict[str, Any]:
    """The document (built once per process)."""
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "pinboard API",
            "version": "1",
            "description": "Pins, boards, likes, comments and follows, stored in the"
            " ID-sharded store. IDs are decimal strings. Lists return"
            ' `{"items": [...], "next": cursor | null}`. Every error is'
            ' `{"error": {"code", "message", "field"?}}`; a wrong method is a 405 with'
            " `Allow`. Endpoints marked with the token scheme need"
            " `Authorization: Token <token>` (from `POST /api/v1/auth/token`);"
            " the others ignore the header. A token expires after"
            f" {token_lifetime()}; `DELETE /api/v1/auth/token` revokes it, and a password"
            " change revokes all of the pinner's tokens. HEAD is answered wherever GET is.",
        },
        "paths": paths(),
        "components": {
            "schemas": SCHEMAS,
            "parameters": PARAMETERS,
            "responses": {
                f"E{code}": {
                    "description": description,
                    "content": {"application/json": {"schema": ref("Error")}},
                    **({"headers": ERROR_HEADERS[code]} if code in ERROR_HEADERS else {}),
                }
                for code, description in ERRORS.items()
            },
            "securitySchemes": {
                "token": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Authorization",
                    "description": "`Token <token>`, from `POST /api/v1/auth/token`; valid for"
                    f" {token_lifetime()} unless revoked.",
                }
            },
        },
    }


def _document(request: HttpRequest) -> JsonResponse:
    return JsonResponse(build())


document = endpoint(GET=_document)
