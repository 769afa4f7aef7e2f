"""The overview's bar chart of shards and users per host, laid out here and drawn as SVG by
the template (no script, no external library: the Content-Security-Policy allows neither)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 720
LABEL_WIDTH = 160  # the host names' column
VALUE_WIDTH = 90  # room for the number after the longest bar
BAR_HEIGHT = 14
ROW_HEIGHT = 2 * BAR_HEIGHT + 14
TOP = 28  # the legend's line


@dataclass(frozen=True)
class Bar:
    y: int
    width: int
    value: str
    x: int = LABEL_WIDTH

    @property
    def text_x(self) -> int:
        return self.x + self.width + 6  # the number just after the bar's end

    @property
    def text_y(self) -> int:
        return self.y + BAR_HEIGHT - 3

    @property
    def height(self) -> int:
        return BAR_HEIGHT


@dataclass(frozen=True)
class Row:
    label: str
    label_y: int
    shards: Bar
    users: Bar


@dataclass(frozen=True)
class Chart:
    rows: list[Row]
    height: int
    width: int = WIDTH
    bars_x: int = LABEL_WIDTH


def bar_chart(hosts: Sequence[tuple[str, int, int | None]]) -> Chart:
    """Bars for ``(host, shards, users)``; each series is scaled to its own largest value
    (shards and users differ by orders of magnitude). Unknown users draw no bar."""
    span = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    most_shards = max((shards for _, shards, _ in hosts), default=0) or 1
    most_users = max((users or 0 for _, _, users in hosts), default=0) or 1
    rows = []
    for index, (name, shards, users) in enumerate(hosts):
        top = TOP + index * ROW_HEIGHT
        rows.append(
            Row(
                label=name,
                label_y=top + BAR_HEIGHT + 4,
                shards=Bar(top, round(span * shards / most_shards), f"{shards:,} shards"),
                users=Bar(
                    top + BAR_HEIGHT + 2,
                    round(span * (users or 0) / most_users),
                    "unknown" if users is None else f"~{users:,} users",
                ),
            )
        )
    return Chart(rows, TOP + len(rows) * ROW_HEIGHT + 8)
