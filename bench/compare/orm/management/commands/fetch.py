"""``fetch [--method M] [--token T] [--body JSON] [--sql] PATH...``: requests through Django's
test client, printed as a JSON list of ``{"path", "status", "json" or "html", "queries"}``.

``queries`` counts the SQL each request sent (``--sql`` lists it). ``--requests FILE``
(``-`` for standard input) takes a JSON list of ``{"path", "method"?, "token"?, "body"?}``
(``body`` as JSON text) instead, so one process can answer many requests of different pinners: the comparison's
tests use it, this build's settings living in their own process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext


class Command(BaseCommand):
    help = "Request paths through the test client and print the responses as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*")
        parser.add_argument("--method", default="GET")
        parser.add_argument("--token", help="sent as `Authorization: Token <token>`")
        parser.add_argument("--body", help="a JSON body (sent as application/json)")
        parser.add_argument("--sql", action="store_true", help="list the SQL of each request")
        parser.add_argument("--requests", help="a file of requests as JSON ('-': standard input)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["requests"]:
            name = options["requests"]
            requests = json.loads(sys.stdin.read() if name == "-" else Path(name).read_text())
        else:
            shared = {k: options[k] for k in ("method", "token", "body") if options[k]}
            requests = [{"path": path, **shared} for path in options["paths"]]
        client = Client()
        results = [fetch(client, request, sql=options["sql"]) for request in requests]
        self.stdout.write(json.dumps(results))


def fetch(client: Client, request: dict[str, Any], *, sql: bool) -> dict[str, Any]:
    token, body = request.get("token"), request.get("body")
    headers = {"Authorization": f"Token {token}"} if token else {}
    content = {"data": body, "content_type": "application/json"} if body is not None else {}
    with CaptureQueriesContext(connection) as queries:
        response = client.generic(
            request.get("method", "GET"), request["path"], headers=headers, **content
        )
    result: dict[str, Any] = {
        "path": request["path"],
        "status": response.status_code,
        "queries": len(queries),
    }
    if response.get("Content-Type") == "application/json":
        result["json"] = response.json()
    else:
        result["html"] = response.content.decode()
    if sql:
        result["sql"] = [query["sql"] for query in queries]
    return result
