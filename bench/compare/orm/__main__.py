"""``python -m bench.compare.orm <command>``: any management command with this build's
settings (migrate, check, fetch, ...); ``COMPARE_ORM_SETTINGS`` names other settings of it
(``bench.compare.orm.settings_cached``)."""

import os
import sys

from django.core.management import execute_from_command_line

if __name__ == "__main__":
    settings = os.environ.get("COMPARE_ORM_SETTINGS") or "bench.compare.orm.settings"
    os.environ["DJANGO_SETTINGS_MODULE"] = settings
    execute_from_command_line(["python -m bench.compare.orm", *sys.argv[1:]])
