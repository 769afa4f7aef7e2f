"""The browser tests' server: the embedded default (``pinboard.settings.dev``), except that a
test may pin and write faster than a person (one test makes a board of 55 pins through the
API; every test writes from the one loopback address) and pin from loopback addresses
(another serves the pages it pins from a local web server)."""

from pinboard.settings.dev import *  # noqa: F403
from pinboard.settings.dev import RATE_LIMITS

RATE_LIMITS = {**RATE_LIMITS, "pin": (1000, 60), "write": (1000, 60), "write_address": (10_000, 60)}
PIN_FETCH_ALLOW_LOOPBACK = True
