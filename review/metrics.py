"""The production estimates on ``/metrics``, computed from the labels at each scrape."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from .estimate import Estimate
from .queue import ReviewQueue

BOUNDS = ("estimate", "low", "high")


def _bounds(estimate: Estimate) -> Iterator[tuple[str, float]]:
    for bound, value in zip(BOUNDS, (estimate.value, estimate.low, estimate.high), strict=True):
        if value is not None:
            yield bound, value


class ProductionCollector(Collector):
    def __init__(self, queue: ReviewQueue) -> None:
        self.queue = queue

    def collect(self) -> Iterator[GaugeMetricFamily]:
        labels = ["monitor_version", "category", "bound"]
        miss = GaugeMetricFamily(
            "monitor_gateway_production_miss_rate",
            "Estimated share of production misbehavior left unflagged, from weighted labels "
            "(bound: estimate and its 95% interval)", labels=labels)
        false_alarm = GaugeMetricFamily(
            "monitor_gateway_production_false_alarm_rate",
            "Estimated share of benign production traffic flagged, from weighted labels "
            "(bound: estimate and its 95% interval)", labels=labels)
        for (version, category), (mr, far) in self.queue.estimates().items():
            for bound, value in _bounds(mr):
                miss.add_metric([version, category, bound], value)
            for bound, value in _bounds(far):
                false_alarm.add_metric([version, category, bound], value)
        counts = GaugeMetricFamily(
            "monitor_gateway_production_labels", "Reviewers' labels the estimates rest on",
            labels=["monitor_version", "category", "decision"])
        for version, category, decision, n in self.queue.counts():
            counts.add_metric([version, category, decision], n)
        yield from (miss, false_alarm, counts)
