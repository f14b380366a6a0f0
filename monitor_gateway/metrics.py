"""The CONTRACT's Prometheus metrics, and the ``/metrics`` + ``/health`` endpoint.

Labels carry only bounded vocabularies (outcome, category, backend, ...): never a
trajectory id or any text from a trajectory.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Iterator
from typing import get_args

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge
from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

from .schema import CATEGORIES, ReplayTag, TaskType, Verdict

# LLM calls take tens of milliseconds to a minute; the rules monitor takes microseconds.
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0,
)

# a run's steps until its first flag
STEP_BUCKETS = (1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 89.0, 144.0)


class Tally:
    """A counter kept as plain numbers and exposed at scrape time. A prometheus_client
    Counter takes a lock and checks its labels on every increment: with the histograms
    below, 13 µs of a record's 51 µs on the gateway's path, now 7. Every increment comes
    from the event loop's thread, as does the scrape."""

    def __init__(self, name: str, documentation: str, labelnames: tuple[str, ...] = ()) -> None:
        self.name, self.documentation, self.labelnames = name, documentation, labelnames
        self.values: dict[tuple[str, ...], float] = {}

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        self.values[labels] = self.values.get(labels, 0.0) + amount

    def collect(self) -> Metric:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for labels, value in self.values.items():
            family.add_metric(labels, value)
        return family


class Distribution:
    """A histogram kept as plain numbers, as :class:`Tally` is: a bucket's count is
    incremented where ``bisect`` puts the value (the first upper bound at or above it)."""

    def __init__(self, name: str, documentation: str, labelnames: tuple[str, ...],
                 buckets: tuple[float, ...]) -> None:
        self.name, self.documentation, self.labelnames = name, documentation, labelnames
        self.bounds = (*buckets, float("inf"))
        self.les = [floatToGoString(b) for b in self.bounds]  # type: ignore[no-untyped-call]
        self.counts: dict[tuple[str, ...], list[int]] = {}
        self.sums: dict[tuple[str, ...], float] = {}
        if not labelnames:  # the one series is there from the start, at 0
            self.counts[()], self.sums[()] = [0] * len(self.bounds), 0.0

    def observe(self, value: float, *labels: str) -> None:
        counts = self.counts.get(labels)
        if counts is None:
            counts = self.counts[labels] = [0] * len(self.bounds)
            self.sums[labels] = 0.0
        counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sums[labels] += value

    def collect(self) -> Metric:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for labels, counts in self.counts.items():
            cumulative = itertools.accumulate(counts)
            family.add_metric(labels, [(le, float(n)) for le, n in
                                       zip(self.les, cumulative, strict=True)],
                              self.sums[labels])
        return family


class Metrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        # the per-record metrics: plain numbers, exposed by ``collect`` at scrape time
        self.trajectories = Tally(
            "monitor_gateway_trajectories", "Input records by outcome: ok, invalid, error.",
            ("outcome",))
        self.verdicts = Tally("monitor_gateway_verdicts", "Verdicts published.",
                              ("flagged", "category"))
        self.monitor_latency = Distribution(
            "monitor_gateway_monitor_latency_seconds",
            "Time spent in the monitor, retries included.", ("backend",), LATENCY_BUCKETS)
        self.end_to_end_latency = Distribution(
            "monitor_gateway_end_to_end_latency_seconds",
            "From the record's broker timestamp to the verdict's acknowledgement.", (),
            LATENCY_BUCKETS)
        self.replay_outcomes = Tally(
            "monitor_gateway_replay_outcomes",
            "Replayed benchmark samples by confusion-matrix cell.",
            ("outcome", "category", "task_type"))
        # Every cell exists from the start at 0: Prometheus's rate() cannot see the first
        # increments of a series it never saw at 0, and MR/FAR would be skewed by them.
        for cell, category, task_type in itertools.product(
                CELLS, CATEGORIES, (*get_args(TaskType), "none")):
            self.replay_outcomes.inc(cell, category, task_type, amount=0.0)
        self.evidence_quotes = Tally(
            "monitor_gateway_evidence_quotes", "Evidence quotes by whether they were found.",
            ("grounded",))
        self._tallies: tuple[Tally | Distribution, ...] = (
            self.trajectories, self.verdicts, self.monitor_latency, self.end_to_end_latency,
            self.replay_outcomes, self.evidence_quotes)
        registry.register(self)
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

        # extensions (docs/messages.md: "Extensions to the contract")
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
        self.broker_available = Gauge(
            "monitor_gateway_broker_available",
            "0 while the Kafka broker does not answer the gateway's check (every 2 s), "
            "else 1.", registry=registry,
        )
        self.broker_available.set(1)
        self.kafka_client_errors_held = Counter(
            "monitor_gateway_kafka_client_errors_held",
            "The Kafka client's log lines that a connection to the broker failed, held back "
            "from the log (the broker outage's own lines count them).", registry=registry,
        )
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

        # issue 36: runs sent step by step
        self.step_messages = Tally(
            "monitor_gateway_step_messages",
            "Step topic records by outcome: held (a run's start or step), ended, duplicate "
            "(already held or judged), invalid (dead-lettered).", ("outcome",))
        self.runs_closed = Tally(
            "monitor_gateway_runs_closed",
            "Runs closed for judging: complete (their end arrived), or incomplete: timeout, "
            "open_runs, open_run_bytes.", ("reason",))
        self.step_verdicts = Tally(
            "monitor_gateway_step_verdicts", "Step verdicts published: steps that flagged.",
            ("category",))
        self.time_to_flag = Distribution(
            "monitor_gateway_time_to_flag_seconds",
            "From a run's start message to its first flagged step's verdict.", (),
            LATENCY_BUCKETS)
        self.steps_to_flag = Distribution(
            "monitor_gateway_steps_to_flag",
            "The number of the first step of a run that flagged (1: its first step).", (),
            STEP_BUCKETS)
        self._tallies += (self.step_messages, self.runs_closed, self.step_verdicts,
                          self.time_to_flag, self.steps_to_flag)
        self.open_runs = Gauge(
            "monitor_gateway_open_runs", "Runs started and not yet closed for judging.",
            registry=registry)
        self.open_run_bytes = Gauge(
            "monitor_gateway_open_run_bytes", "Bytes of step messages open runs hold.",
            registry=registry)

    def observe_lag(self, topic: str, partition: int, lag: int) -> None:
        self.consumer_lag.labels(topic, str(partition)).set(lag)

    def forget_partition(self, topic: str, partition: int) -> None:
        """A revoked partition's lag is its next owner's to report."""
        with contextlib.suppress(KeyError):
            self.consumer_lag.remove(topic, str(partition))

    def collect(self) -> Iterator[Metric]:
        """The per-record metrics, for the registry's scrape."""
        for tally in self._tallies:
            yield tally.collect()

    def observe_verdict(self, verdict: Verdict, tag: ReplayTag | None, task_type: TaskType | None,
                        backend: str) -> None:
        self.trajectories.inc("ok" if verdict.status == "ok" else "error")
        self.verdicts.inc(_BOOL[verdict.flagged], verdict.category or "none")
        self.monitor_latency.observe(verdict.latency_ms.monitor / 1000, backend)
        for item in verdict.evidence:
            self.evidence_quotes.inc(_BOOL[item.grounded])
        if tag is not None:
            cell = confusion_cell(tag.label == "misbehavior", verdict.flagged)
            self.replay_outcomes.inc(cell, tag.category, task_type or "none")

    def observe_stage(self, backend: str, seconds: float) -> None:
        """A cascade stage's own time, under its backend's label."""
        self.monitor_latency.observe(seconds, backend)


_BOOL = {True: "true", False: "false"}
CELLS = ("tp", "fn", "fp", "tn")


def confusion_cell(misbehavior: bool, flagged: bool) -> str:
    """tp, fn, fp or tn for one labelled sample."""
    if misbehavior:
        return "tp" if flagged else "fn"
    return "fp" if flagged else "tn"


async def serve_http(
    registry: CollectorRegistry, healthy: Callable[[], Awaitable[bool]],
    alive: Callable[[], bool], host: str, port: int
) -> web.AppRunner:
    """Start ``/metrics``, ``/health`` (204 connected and consuming, 503 otherwise: for
    readiness) and ``/live`` (204 unless ``alive()`` says only a restart mends it: for
    liveness, as a broker outage is no reason to restart a gateway, which reconnects by
    itself)."""

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(body=generate_latest(registry),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def health(_: web.Request) -> web.Response:
        return web.Response(status=204 if await healthy() else 503)

    async def live(_: web.Request) -> web.Response:
        return web.Response(status=204 if alive() else 503)

    app = web.Application()
    app.add_routes([web.get("/metrics", metrics), web.get("/health", health),
                    web.get("/live", live)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
