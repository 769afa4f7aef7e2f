"""Reading a ``/metrics`` page (or a registry) back as samples, for the tests of metrics."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterable

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import REGISTRY

Labels = frozenset[tuple[str, str]]


class Samples(dict[tuple[str, Labels], float]):
    """Each sample by (name, labels)."""

    def names(self) -> set[str]:
        return {name for name, _ in self}

    def total(self, name: str, **labels: str) -> float:
        """The sum of ``name``'s samples whose labels include ``labels``."""
        wanted = set(labels.items())
        return sum(v for (n, got), v in self.items() if n == name and wanted <= got)

    def label_values(self, name: str, label: str) -> set[str]:
        return {dict(got)[label] for (n, got) in self if n == name and label in dict(got)}


def parse(text: str) -> Samples:
    samples = Samples()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as response:
        return parse(response.read().decode())


def in_process() -> Samples:
    """This process's own metrics (no multiprocess directory in the test run)."""
    return parse(generate_latest(REGISTRY).decode())


def missing(samples: Samples, names: Iterable[str]) -> list[str]:
    """Which of ``names`` have no sample at all."""
    return sorted(set(names) - samples.names())
