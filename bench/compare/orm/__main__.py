"""``python -m bench.compare.orm <command>``: any management command with this build's
settings (migrate, check, fetch, ...)."""

import os
import sys

from django.core.management import execute_from_command_line

if __name__ == "__main__":
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.compare.orm.settings"
    execute_from_command_line(["python -m bench.compare.orm", *sys.argv[1:]])
