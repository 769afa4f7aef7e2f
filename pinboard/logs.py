"""The site's logs: one line a record on standard error, as JSON or as plain text.

``LOG_FORMAT`` (``PINBOARD_LOG_FORMAT``) chooses: ``json`` (production's default, and the
local cluster's), one JSON object a line for a log collector; ``text`` (``make run``'s
and the tests' default), for a person at a terminal. A JSON line holds

- ``time``: when, UTC, ISO 8601 to the millisecond (``2025-05-01T09:30:00.123Z``);
- ``level``, ``logger``, ``message`` (its arguments put in);
- ``request_id``: the ID of the request or task being served (``pinboard/request_id.py``),
  when there is one;
- ``exception`` (and ``stack``): the traceback's text, when the record has one;
- every field the caller passed with ``extra=``, under its own name (a value JSON has no
  type for is written as its ``str``).

The formatter is our own, some forty lines over the standard library's ``json``, rather
than python-json-logger: the shape above (no field of null, UTC with a ``Z``, the request
ID from a context variable) would need a subclass and a filter of that library anyway, and
a dependency fewer is one fewer to keep. Non-ASCII text is escaped, so a line is one line
of ASCII whatever the locale of standard error.

The request ID is added by a filter on the handler, not on a logger: a handler's filters
see every record that reaches it, whichever logger it was logged on (``shardstore.*``,
``celery.*``, ``django.*``), while a logger's see only the records logged on it.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from . import request_id

FORMATS = ("json", "text")
#: The attributes every LogRecord has; any other was passed with ``extra=``.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


class RequestIdFilter(logging.Filter):
    """Sets ``record.request_id`` to the current request's ID, where there is one (and the
    caller passed none)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            current = request_id.current()
            if current is not None:
                record.request_id = current
        return True


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON: see the module's docstring for its fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        if rid is not None:
            entry["request_id"] = rid
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        for name, value in record.__dict__.items():
            if name not in _STANDARD and name not in entry and not name.startswith("_"):
                entry[name] = value
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    """``time level logger [request id] message``, the request's ID where there is one."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(request)s%(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        rid = getattr(record, "request_id", None)
        fields = {**record.__dict__, "request": f"[{rid}] " if rid is not None else ""}
        return self._fmt % fields if self._fmt else record.getMessage()


def logging_config(log_format: str, level: str = "INFO") -> dict[str, Any]:
    """Django's ``LOGGING``: every record at ``level`` and above, from any logger, on standard
    error in ``log_format``; Django's own loggers pass theirs up to it instead of printing
    them themselves (``runserver``'s access lines too, but for its errors: the site logs each
    request, ``request_log.py``)."""
    if log_format not in FORMATS:
        raise ValueError(f"a log format is one of {FORMATS}, not {log_format!r}")
    formatter = JsonFormatter if log_format == "json" else TextFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,  # the loggers modules made on import log on
        "filters": {"request_id": {"()": RequestIdFilter}},
        "formatters": {"site": {"()": formatter}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "filters": ["request_id"],
                "formatter": "site",
            }
        },
        "root": {"handlers": ["stderr"], "level": level},
        "loggers": {
            "django": {"handlers": [], "level": level, "propagate": True},
            "django.server": {"handlers": [], "level": "ERROR", "propagate": True},
            # Each connection opened and closed, at INFO: every command would print them.
            "kazoo": {"level": "WARNING"},
        },
    }
