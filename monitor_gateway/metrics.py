"""The CONTRACT's Prometheus metrics, and the ``/metrics`` + ``/health`` endpoint.

Labels carry only bounded vocabularies (outcome, category, backend, ...): never a
trajectory id or any text from a trajectory.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable
from typing import Any, get_args

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest

from .schema import CATEGORIES, ReplayTag, TaskType, Verdict

# LLM calls take tens of milliseconds to a minute; the rules monitor takes microseconds.
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0,
)


class Metrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        self.trajectories = Counter(
            "monitor_gateway_trajectories", "Input records by outcome: ok, invalid, error.",
            ["outcome"], registry=registry,
        )
        self.verdicts = Counter(
            "monitor_gateway_verdicts", "Verdicts published.", ["flagged", "category"],
            registry=registry,
        )
        self.monitor_latency = Histogram(
            "monitor_gateway_monitor_latency_seconds",
            "Time spent in the monitor, retries included.", ["backend"],
            buckets=LATENCY_BUCKETS, registry=registry,
        )
        self.end_to_end_latency = Histogram(
            "monitor_gateway_end_to_end_latency_seconds",
            "From the record's broker timestamp to the verdict's acknowledgement.",
            buckets=LATENCY_BUCKETS, registry=registry,
        )
        self.replay_outcomes = Counter(
            "monitor_gateway_replay_outcomes",
            "Replayed benchmark samples by confusion-matrix cell.",
            ["outcome", "category", "task_type"], registry=registry,
        )
        # Every cell exists from the start at 0: Prometheus's rate() cannot see the first
        # increments of a series it never saw at 0, and MR/FAR would be skewed by them.
        for cell, category, task_type in itertools.product(
                CELLS, CATEGORIES, (*get_args(TaskType), "none")):
            self.replay_outcomes.labels(cell, category, task_type)
        self.evidence_quotes = Counter(
            "monitor_gateway_evidence_quotes", "Evidence quotes by whether they were found.",
            ["grounded"], registry=registry,
        )
        self.inflight = Gauge(
            "monitor_gateway_inflight",
            "Trajectories fetched and not yet done: being judged or awaiting the broker's ack.",
            registry=registry,
        )
        self.consumer_lag = Gauge(
            "monitor_gateway_consumer_lag",
            "Records of an assigned input partition not yet done: its end offset minus the "
            "first offset whose verdict or dead letter is not yet acknowledged.",
            ["topic", "partition"], registry=registry,
        )

        # extensions (README: "Metrics beyond the contract")
        self.concurrency_limit = Gauge(
            "monitor_gateway_concurrency_limit",
            "Monitor calls allowed in flight now: the adaptive limit, CONCURRENCY its ceiling.",
            registry=registry,
        )
        self.backend_available = Gauge(
            "monitor_gateway_backend_available",
            "0 while the monitor backend is out and the gateway waits for it (fetching "
            "paused), else 1.", registry=registry,
        )
        self.backend_available.set(1)
        self.internal_errors = Counter(
            "monitor_gateway_internal_errors",
            "Faults of the gateway's own on a record (each one logged with its traceback).",
            registry=registry,
        )
        self.verdicts_cut = Counter(
            "monitor_gateway_verdicts_cut",
            "Verdicts refused as too large: cut to fit, or dead-lettered.", ["outcome"],
            registry=registry,
        )

    def observe_lag(self, topic: str, partition: int, lag: int) -> None:
        self.consumer_lag.labels(topic, str(partition)).set(lag)

    def forget_partition(self, topic: str, partition: int) -> None:
        """A revoked partition's lag is its next owner's to report."""
        with contextlib.suppress(KeyError):
            self.consumer_lag.remove(topic, str(partition))

    def observe_verdict(self, verdict: Verdict, tag: ReplayTag | None, task_type: TaskType | None,
                        backend: str) -> None:
        child = self._child
        child(self.trajectories, "ok" if verdict.status == "ok" else "error").inc()
        child(self.verdicts, _BOOL[verdict.flagged], verdict.category or "none").inc()
        child(self.monitor_latency, backend).observe(verdict.latency_ms.monitor / 1000)
        for item in verdict.evidence:
            child(self.evidence_quotes, _BOOL[item.grounded]).inc()
        if tag is not None:
            cell = confusion_cell(tag.label == "misbehavior", verdict.flagged)
            child(self.replay_outcomes, cell, tag.category, task_type or "none").inc()


    def observe_stage(self, backend: str, seconds: float) -> None:
        """A cascade stage's own time, under its backend's label."""
        self._child(self.monitor_latency, backend).observe(seconds)

    def _child(self, metric: Any, *values: str) -> Any:
        """The metric's child for these label values. ``labels()`` validates, hashes and
        locks on every call; on the hot path each child is looked up once."""
        key = (id(metric), values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child


_BOOL = {True: "true", False: "false"}
CELLS = ("tp", "fn", "fp", "tn")


def confusion_cell(misbehavior: bool, flagged: bool) -> str:
    """tp, fn, fp or tn for one labelled sample."""
    if misbehavior:
        return "tp" if flagged else "fn"
    return "fp" if flagged else "tn"


async def serve_http(
    registry: CollectorRegistry, healthy: Callable[[], Awaitable[bool]], host: str, port: int
) -> web.AppRunner:
    """Start ``/metrics`` and ``/health`` (204 connected and consuming, 503 otherwise)."""

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(body=generate_latest(registry),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def health(_: web.Request) -> web.Response:
        return web.Response(status=204 if await healthy() else 503)

    app = web.Application()
    app.add_routes([web.get("/metrics", metrics), web.get("/health", health)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
