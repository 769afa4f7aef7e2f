"""The overview's trends: the last hour of the figures that matter, from Prometheus's HTTP
API (``PINBOARD_PROMETHEUS_URL``), laid out as small line charts for the template to draw
as SVG (no script: the console's Content-Security-Policy allows none).

Each figure is one ``query_range`` (a point a minute), all asked at once, each with a
two-second timeout: a Prometheus that does not answer costs the page two seconds and says
so, and one figure that fails leaves the others drawn.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.conf import settings

TIMEOUT = 2.0
HOUR = 3600
STEP = 60
WIDTH, HEIGHT = 240, 64  # one chart's plot, in SVG units
MAX_LINES = 6  # a chart draws the largest of its series at most


@dataclass(frozen=True)
class Figure:
    title: str
    query: str
    unit: str  # "/s", "s", "%"
    label: str = ""  # the series' label that names each line ("" for a single line)


FIGURES = (
    Figure("Requests per second", "sum(rate(pinboard_http_requests_total[2m]))", "/s"),
    Figure(
        "p99 time to serve a request",
        "histogram_quantile(0.99, sum by (le) (rate(pinboard_http_request_duration_seconds_bucket[5m])))",
        "s",
    ),
    Figure(
        "Cache hit ratio",
        'sum(rate(shardstore_cache_lookups_total{result="hit"}[5m]))'
        " / sum(rate(shardstore_cache_lookups_total[5m]))",
        "%",
    ),
    Figure(
        "Replication lag", "max by (host) (pinboard_mysql_replication_lag_seconds)", "s", "host"
    ),
    Figure(
        "Fan-out lag, p99",
        "histogram_quantile(0.99, sum by (le) (rate(pinboard_fanout_lag_seconds_bucket[5m])))",
        "s",
    ),
)


@dataclass(frozen=True)
class Line:
    label: str
    points: list[tuple[float, float]]  # in the chart's SVG units, oldest first
    latest: str  # the last value, formatted

    @property
    def polyline(self) -> str:
        return " ".join(f"{x:.1f},{y:.1f}" for x, y in self.points)

    @property
    def end(self) -> tuple[float, float]:
        """Where the latest value is: marked with a dot (a lone point draws no line)."""
        return self.points[-1]


@dataclass(frozen=True)
class Trend:
    title: str
    lines: list[Line] = field(default_factory=list)
    peak: str = ""  # the largest value drawn, formatted (the top of the chart)
    error: str = ""  # why it is not drawn
    width: int = WIDTH
    height: int = HEIGHT


def trends(now: float) -> list[Trend] | None:
    """Every figure over the hour before ``now``; None if no Prometheus is configured."""
    url = settings.PROMETHEUS_URL
    if not url:
        return None
    with ThreadPoolExecutor(len(FIGURES)) as pool:
        return list(pool.map(lambda figure: trend(url, figure, now), FIGURES))


def trend(url: str, figure: Figure, now: float) -> Trend:
    try:
        series = query_range(url, figure.query, now - HOUR, now)
    except (OSError, ValueError, KeyError) as exc:
        return Trend(figure.title, error=f"Prometheus did not answer: {exc}")
    if not series:
        return Trend(figure.title, error="no data in the last hour")
    series = sorted(series, key=lambda s: -max(v for _, v in s[1]))[:MAX_LINES]
    peak = max(v for _, values in series for _, v in values) or 1.0
    lines = [
        Line(labels.get(figure.label, ""), _points(values, now, peak), _format(values[-1][1], figure.unit))
        for labels, values in series
    ]  # fmt: skip
    return Trend(figure.title, lines, _format(peak, figure.unit))


def query_range(
    url: str, query: str, start: float, end: float
) -> list[tuple[dict[str, str], list[tuple[float, float]]]]:
    """Each series of ``query`` as (labels, [(time, value)]), NaN points left out."""
    params = urllib.parse.urlencode({"query": query, "start": start, "end": end, "step": STEP})
    with urllib.request.urlopen(f"{url}/api/v1/query_range?{params}", timeout=TIMEOUT) as reply:
        answer = json.loads(reply.read())
    if answer.get("status") != "success":
        raise ValueError(answer.get("error", "the query failed"))
    found = []
    for result in answer["data"]["result"]:
        values = [(float(t), float(v)) for t, v in result["values"] if v not in ("NaN", "+Inf")]
        if values:
            found.append((result["metric"], values))
    return found


def _points(
    values: Sequence[tuple[float, float]], now: float, peak: float
) -> list[tuple[float, float]]:
    start = now - HOUR
    return [((t - start) / HOUR * WIDTH, HEIGHT - min(v / peak, 1.0) * HEIGHT) for t, v in values]


def _format(value: float, unit: str) -> str:
    if unit == "%":
        return f"{value:.1%}"
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"
    return f"{value:.1f}{unit}"
