"""pinboard's production settings serving the hand-built pages of bench/compare/raw.py."""

from pinboard.settings.prod import *  # noqa: F403

ROOT_URLCONF = "bench.compare.raw"
