"""The browser tests' server: the embedded default (``pinboard.settings.dev``), except that a
test may pin faster than a person: one test makes a board of 55 pins through the API."""

from pinboard.settings.dev import *  # noqa: F403
from pinboard.settings.dev import RATE_LIMITS

RATE_LIMITS = {**RATE_LIMITS, "pin": (1000, 60)}
