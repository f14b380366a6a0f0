"""The per-record metrics are plain numbers exposed at scrape time: a scrape must read
exactly what prometheus_client's own Counter and Histogram would have exposed."""

from __future__ import annotations

import re

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from monitor_gateway.metrics import LATENCY_BUCKETS, Metrics

# on a bound, between bounds, past the last one, zero
VALUES = (0.0005, 0.0007, 0.001, 0.3, 125.0, 0.0, 0.0005)


def exposition(registry: CollectorRegistry) -> list[str]:
    """The exposition's lines, without prometheus_client's ``_created`` series."""
    return [line for line in generate_latest(registry).decode().splitlines()
            if "_created" not in line]


def lines_of(registry: CollectorRegistry, name: str) -> list[str]:
    """The lines of one metric family."""
    family = re.compile(rf"(?:# \w+ )?{name}(?:_total|_bucket|_count|_sum)?[{{ ]")
    return [line for line in exposition(registry) if family.match(line)]


def test_a_histogram_scrapes_as_prometheus_clients_own() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    metrics = Metrics(ours)
    reference = Histogram("monitor_gateway_monitor_latency_seconds",
                          "Time spent in the monitor, retries included.", ["backend"],
                          buckets=LATENCY_BUCKETS, registry=theirs)
    unlabelled = Histogram("monitor_gateway_end_to_end_latency_seconds",
                           "From the record's broker timestamp to the verdict's "
                           "acknowledgement.", buckets=LATENCY_BUCKETS, registry=theirs)
    end_to_end = "monitor_gateway_end_to_end_latency_seconds"
    assert lines_of(ours, end_to_end) == lines_of(theirs, end_to_end)  # 0 before any
    for value in VALUES:
        metrics.monitor_latency.observe(value, "rules")
        reference.labels("rules").observe(value)
        metrics.end_to_end_latency.observe(value)
        unlabelled.observe(value)
    for name in ("monitor_gateway_monitor_latency_seconds", end_to_end):
        assert lines_of(ours, name) == lines_of(theirs, name) != []
    assert 'monitor_gateway_monitor_latency_seconds_bucket{backend="rules",le="0.0005"} 3.0' \
        in exposition(ours)


def test_a_counter_scrapes_as_prometheus_clients_own() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    metrics = Metrics(ours)
    reference = Counter("monitor_gateway_verdicts", "Verdicts published.",
                        ["flagged", "category"], registry=theirs)
    for flagged, category in [("true", "sycophancy_bias"), ("false", "none"),
                              ("true", "sycophancy_bias")]:
        metrics.verdicts.inc(flagged, category)
        reference.labels(flagged, category).inc()
    name = "monitor_gateway_verdicts"
    assert lines_of(ours, name) == lines_of(theirs, name) != []
    assert ours.get_sample_value("monitor_gateway_verdicts_total",
                                 {"flagged": "true", "category": "sycophancy_bias"}) == 2.0


@pytest.mark.parametrize("cell", ["tp", "fn", "fp", "tn"])
def test_every_replay_cell_is_there_from_the_start(cell: str) -> None:
    registry = CollectorRegistry()
    Metrics(registry)
    assert registry.get_sample_value(
        "monitor_gateway_replay_outcomes_total",
        {"outcome": cell, "category": "specification_gaming", "task_type": "none"}) == 0.0
