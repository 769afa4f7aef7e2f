"""``python -m toolkit.cluster up|down|status``: see toolkit/cluster/commands.py."""

import sys

from toolkit.cluster.commands import main

sys.exit(main())
