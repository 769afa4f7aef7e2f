"""What the guard decided about a host, and why (``guard.py``, ``replica_watch.py``)."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Decision:
    """What the guard decided about a host, and why: a master (``failover``, ``failed``,
    ``refused``, ``ambiguous``, ``paused``, ``cooling-down``, ``resumed``; and ``adding``,
    ``added``, ``add-`` ``failed``, ``refused`` or ``paused`` a replica), or a replica
    (``replacing``, ``replaced``, and ``replace-`` ``failed``, ``refused``, ``paused`` or
    ``cooling-down``)."""

    host: str
    kind: str
    evidence: str
    at: float
    #: Seconds from the first sign of the failure to the decision (detection), and the
    #: recovery's own run (a failover's, or a replacement's rebuild), where there was one.
    detected: float | None = None
    took: float | None = None

    @property
    def when(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(self.at))
