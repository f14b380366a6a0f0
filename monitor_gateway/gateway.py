"""The running gateway: consume, judge, publish, commit.

FastStream's batch subscriber hands over fetched records; each becomes a task. Up to
``CONCURRENCY`` monitor calls run at once across all partitions *and within one*, so a slow
call never blocks the records behind it; ``MAX_PENDING`` bounds all fetched records not yet
acknowledged, so waiting for the broker never holds a monitor slot. Offsets are committed
by a separate loop, and only up to the point below which every record's verdict or dead
letter has been acknowledged by the broker (:class:`~monitor_gateway.offsets.OffsetTracker`):
at-least-once delivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import time
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import Any, NamedTuple

from aiohttp import web
from aiokafka import ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.errors import KafkaError
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from faststream.kafka.message import FAKE_CONSUMER
from faststream.kafka.message import KafkaMessage as KafkaStreamMessage
from faststream.kafka.prometheus import KafkaPrometheusMiddleware
from faststream.message import StreamMessage
from faststream.middlewares import AckPolicy
from opentelemetry.trace import Span
from prometheus_client import CollectorRegistry

from .breaker import CircuitBreaker
from .calling import (
    Backend,
    Deadlines,
    MonitorFailure,
    RetryPolicy,
    call_monitor,
    judge_inline,
)
from .config import load_config
from .evidence import ground
from .ingest import Rejection, dead_letter, parse_trajectory, read_replay
from .limits import Limiter
from .logs import Outage
from .metrics import Metrics, serve_http
from .monitors.base import Closeable, InlineMonitor, Judgement, Monitor
from .offsets import OffsetTracker, Ticket
from .policy import Policy
from .publish import TOO_LARGE, Outgoing, Publisher
from .schema import MonitorCard, Trajectory, Verdict, utcnow
from .settings import GatewaySettings
from .tracing import Tracing, from_settings
from .verdict import build_verdict, fit

log = logging.getLogger(__name__)


class Work(NamedTuple):
    """One input record on its way through: where it came from, when, and its trace."""

    record: ConsumerRecord[bytes, bytes]
    ticket: Ticket
    received_at: datetime
    started: float
    span: Span | None


def raw_batch(records: tuple[ConsumerRecord[bytes, bytes], ...]) -> KafkaStreamMessage:
    """FastStream's parser for the input batch. Its own decodes every header value as
    strict UTF-8 and drops the whole batch on the first that is not; and it reads
    ``reply_to`` from the headers, which would let any producer make the gateway publish
    to a topic of its choosing. This one decodes nothing and never fails: ingest reads
    each record, tolerantly, once."""
    first, last = records[0], records[-1]
    return KafkaStreamMessage(
        body=[record.value or b"" for record in records],  # sizes for the Prometheus middleware
        headers={},
        reply_to="",
        message_id=f"{first.offset}-{last.offset}-{first.timestamp}",
        raw_message=records,
        consumer=FAKE_CONSUMER,  # never used: AckPolicy.MANUAL, offsets are ours
    )


class Gateway:
    def __init__(
        self,
        settings: GatewaySettings,
        monitor: Monitor,
        registry: CollectorRegistry | None = None,
        tracing: Tracing | None = None,
    ) -> None:
        self.settings = settings
        self.monitor = monitor
        self.registry = registry or CollectorRegistry()
        self.tracker = OffsetTracker()
        self.metrics = Metrics(self.registry)
        self.metrics.inflight.set_function(self.tracker.in_flight)
        self.retry = RetryPolicy(
            timeout=settings.monitor_timeout,
            retries=settings.monitor_retries,
            backoff=settings.retry_backoff,
        )
        self.deadlines = Deadlines(resolution=min(0.05, settings.monitor_timeout / 4))
        self._inline = monitor if isinstance(monitor, InlineMonitor) else None
        self.policy = Policy.build(settings, load_config(settings.monitor_config))
        # MAX_PENDING bounds everything fetched and not yet acknowledged; the backend's
        # limiter bounds monitor calls (CONCURRENCY is its ceiling), so waiting for the
        # broker's ack never holds a monitor slot
        self._pending = asyncio.Semaphore(max(settings.max_pending, settings.concurrency))
        self.backend = Backend(
            Limiter(settings.concurrency,
                    adaptive=settings.adaptive_concurrency and self._inline is None,
                    on_change=self.metrics.concurrency_limit.set),
            CircuitBreaker(threshold=settings.breaker_failures, budget=settings.outage_budget,
                           wait=settings.outage_policy == "wait"),
        )
        self._paused = False
        self._stuck: set[Ticket] = set()  # records a fault of ours left without an outcome
        self._tasks: set[asyncio.Task[None]] = set()
        self._draining = False
        self._commit_task: asyncio.Task[None] | None = None
        self._commits = Outage("offset commits", log)
        self._reachable = Outage("Kafka broker connection", log)
        self._watched = 0.0
        self._http: web.AppRunner | None = None
        self.publisher = Publisher(settings)
        self.tracing = tracing or from_settings(settings)

        middlewares: list[Any] = [
            KafkaPrometheusMiddleware(registry=self.registry, app_name="monitor-gateway")]
        if self.tracing.enabled:  # a span for each fetched batch, linked to its records' traces
            from faststream.kafka.opentelemetry import KafkaTelemetryMiddleware

            middlewares.append(KafkaTelemetryMiddleware(tracer_provider=self.tracing.provider))
        self.broker = KafkaBroker(
            settings.kafka_bootstrap,
            security=settings.security(),
            middlewares=middlewares,
            logger=logging.getLogger("monitor_gateway.kafka"),
            log_level=logging.DEBUG,  # FastStream's per-message lines; ours are INFO
            graceful_timeout=settings.shutdown_grace,
        )
        self._subscriber = self.broker.subscriber(
            settings.input_topic,
            group_id=settings.group_id,
            batch=True,
            max_records=settings.fetch_max_records,
            ack_policy=AckPolicy.MANUAL,  # never commit on receipt: the tracker commits
            no_reply=True,  # the gateway writes to its verdict and dead-letter topics only
            auto_offset_reset=settings.auto_offset_reset,
            listener=_CommitOnRevoke(self),
            max_partition_fetch_bytes=max(1024 * 1024, settings.max_message_bytes + 1024),
        )

        async def on_batch(message: KafkaMessage) -> None:
            records = message.raw_message
            await self._dispatch(records if isinstance(records, tuple) else (records,))

        async def raw(message: StreamMessage[Any]) -> None:
            """No decoding: FastStream would JSON-decode every record; ingest does it once."""

        self._subscriber(on_batch, parser=raw_batch, decoder=raw)

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        await self.publisher.start()
        await self.broker.start()
        self._commit_task = asyncio.create_task(self._commit_loop())
        if self.settings.metrics_port:
            self._http = await serve_http(
                self.registry, self.healthy, self.settings.metrics_host, self.settings.metrics_port
            )
        log.info(
            "gateway consuming %s as group %s with monitor %s, concurrency %d",
            self.settings.input_topic, self.settings.group_id, self.monitor.card.name,
            self.settings.concurrency,
        )

    async def stop(self) -> None:
        """Stop fetching, give in-flight work the grace period, commit what is done, and
        abandon the rest uncommitted: the group's next owner processes it again."""
        self._draining = True
        consumer = self._subscriber.consumer
        if consumer is not None:
            consumer.pause(*consumer.assignment())
        deadline = time.monotonic() + self.settings.shutdown_grace
        while self.tracker.in_flight() and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        await self._commit()
        if unfinished := self.tracker.in_flight():
            log.warning("abandoned %d in-flight trajectories, left uncommitted", unfinished)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._commit_task is not None:
            self._commit_task.cancel()
            await asyncio.gather(self._commit_task, return_exceptions=True)
        await self.broker.stop()
        await self.publisher.stop()
        if isinstance(self.monitor, Closeable):
            await self.monitor.aclose()
        if self._http is not None:
            await self._http.cleanup()
        await asyncio.to_thread(self.tracing.shutdown)  # flushes spans over the network

    async def healthy(self) -> bool:
        """Connected and consuming: the consume loop runs, the broker answers, and no fault
        of ours has left a record without an outcome."""
        if self._draining or not self._subscriber.running or self._subscriber.consumer is None:
            return False
        if self._stuck:
            return False
        return bool(await self.broker.ping(timeout=2.0))

    # --- data path -----------------------------------------------------------------------

    async def _dispatch(self, records: tuple[ConsumerRecord[bytes, bytes], ...]) -> None:
        """Runs on the fetch loop. Every record of the batch is registered with the offset
        tracker first, so that nothing below can let a commit pass a record that has no
        outcome yet. A synchronous monitor (rules, classifier) judges right here; an
        asynchronous one (an LLM call) gets a task, so records of one partition are judged
        concurrently. Either way nobody waits here for the broker's ack."""
        tickets = [self.tracker.start(TopicPartition(r.topic, r.partition), r.offset)
                   for r in records]
        for record, ticket in zip(records, tickets, strict=True):
            # Backpressure: the fetch loop waits here for room, and is the only waiter, so
            # a slow monitor or broker stalls fetching instead of piling up work.
            await self._pending.acquire()
            if self._draining:
                self._pending.release()
                return
            work = Work(record, ticket, utcnow(), time.perf_counter(),
                        self.tracing.consume(record))
            try:
                await self._start(work)
            except Exception as exc:  # a bug of ours: loud, counted, and the record still ends
                await self._fault(work, exc)

    async def _start(self, work: Work) -> None:
        parsed = parse_trajectory(work.record.value, self.settings.max_message_bytes)
        if isinstance(parsed, Rejection):
            await self._dead_letter(work, parsed)
        elif self._inline is not None:
            span = self.tracing.monitor(work.span, self.monitor.card)
            outcome = judge_inline(self._inline, parsed)
            self.tracing.judged(span, outcome)
            await self._verdict(work, parsed, outcome, time.perf_counter() - work.started)
        else:
            task = asyncio.create_task(self._judge(work, parsed))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _fault(self, work: Work, exc: Exception) -> None:
        """A fault of the gateway's own on one record: logged with its traceback, counted,
        and the record dead-lettered with the reason. If even that fails, the record stays
        unfinished: its partition's commits stop there and ``/health`` answers 503."""
        record = work.record
        log.error("internal error on %s/%d/%d", record.topic, record.partition, record.offset,
                  exc_info=exc)
        self.metrics.internal_errors.inc()
        self._stuck.add(work.ticket)
        try:
            await self._dead_letter(work, Rejection(
                "internal_error", f"gateway error: {type(exc).__name__}: {exc}"))
        except Exception:
            log.exception("cannot dead-letter %s/%d/%d either; its partition's commits wait "
                          "for a restart", record.topic, record.partition, record.offset)

    async def _judge(self, work: Work, trajectory: Trajectory) -> None:
        """An asynchronous monitor call, within the backend's concurrency limit."""
        try:
            span = self.tracing.monitor(work.span, self.monitor.card)
            with self.tracing.current(span):
                outcome, seconds = await call_monitor(self.monitor, trajectory, self.retry,
                                                      self.deadlines, self.backend)
            self.tracing.judged(span, outcome)
            await self._verdict(work, trajectory, outcome, seconds)
        except Exception as exc:
            await self._fault(work, exc)

    async def _verdict(self, work: Work, trajectory: Trajectory,
                       outcome: Judgement | MonitorFailure, monitor_seconds: float) -> None:
        record = work.record
        # the replay headers are read here, after the monitor: it never sees them
        tag, echoed = read_replay(record.headers)

        def build(outcome: Judgement | MonitorFailure) -> Verdict:
            return build_verdict(
                trajectory, outcome,
                ground(trajectory, outcome.quotes) if isinstance(outcome, Judgement) else [],
                card=self._card(outcome),
                policy=self.policy,
                tag=tag,
                received_at=work.received_at,
                monitor_seconds=monitor_seconds,
                gateway_seconds=time.perf_counter() - work.started,
            )

        try:
            verdict = build(outcome)
        except Exception as exc:  # a bug of ours must cost a verdict's quality, not a record
            log.exception("cannot build the verdict of %r", trajectory.id)
            outcome = MonitorFailure(f"gateway error: {type(exc).__name__}: {exc}", attempts=0)
            verdict = build(outcome)
        self.tracing.verdict(work.span, verdict)

        def acknowledged() -> None:
            self.metrics.observe_verdict(verdict, tag, trajectory.task_type,
                                         self.monitor.card.backend)
            if isinstance(outcome, Judgement):
                for backend, seconds in outcome.stages:
                    self.metrics.observe_stage(backend, seconds)
            self.metrics.end_to_end_latency.observe(
                max(0.0, time.time() - record.timestamp / 1000))

        await self._publish(self._verdict_message(verdict, echoed, work, acknowledged), work)

    def _verdict_message(self, verdict: Verdict, headers: list[tuple[str, bytes]], work: Work,
                         acknowledged: Callable[[], None]) -> Outgoing:
        """The verdict as a message; if the broker refuses it as too large, it is cut to fit
        (each refusal halves the target), and once nothing is left to cut it becomes a dead
        letter: the partition never stalls on it."""
        value = verdict.model_dump_json().encode()

        def smaller() -> Outgoing | None:
            target = min(self.publisher.max_bytes - ENVELOPE, len(value) // 2)
            fitted = fit(verdict, target)
            if fitted is None:
                self.metrics.verdicts_cut.labels(outcome="dead_letter").inc()
                return self._dead_letter_message(work, Rejection(
                    "verdict_too_large",
                    f"the verdict of {verdict.trajectory_id!r} ({len(value)} bytes) was "
                    "refused as too large even without metadata, rationale and evidence"))
            self.metrics.verdicts_cut.labels(outcome="cut").inc()
            return self._verdict_message(fitted, headers, work, acknowledged)

        return Outgoing(self.settings.verdict_topic, value, verdict.trajectory_id.encode(),
                        headers, acknowledged, smaller)

    def _card(self, outcome: Judgement | MonitorFailure) -> MonitorCard:
        """The monitor that judged: a cascade names its deciding stage."""
        if isinstance(outcome, Judgement) and outcome.card is not None:
            return outcome.card
        return self.monitor.card

    async def _dead_letter(self, work: Work, why: Rejection) -> None:
        record = work.record
        log.info("dead letter %s at %s/%d/%d: %s", why.error, record.topic, record.partition,
                 record.offset, why.detail)
        self.tracing.rejected(work.span, why.error)
        await self._publish(self._dead_letter_message(work, why), work)

    def _dead_letter_message(self, work: Work, why: Rejection,
                             value_max: int | None = None) -> Outgoing:
        """The dead letter as a message; if refused as too large, its copy of the input is
        halved until it fits, then left out (``value_truncated`` says so)."""
        record = work.record
        letter = dead_letter(why, topic=record.topic, partition=record.partition,
                             offset=record.offset, key=record.key, value=record.value,
                             **({"value_max": value_max} if value_max is not None else {}))
        kept = len(record.value or b"") if value_max is None else value_max

        def smaller() -> Outgoing | None:
            return self._dead_letter_message(work, why, kept // 2) if kept else None

        return Outgoing(self.settings.dlq_topic, letter.model_dump_json().encode(), record.key,
                        [], self._count_invalid, smaller)

    def _count_invalid(self) -> None:
        self.metrics.trajectories.labels(outcome="invalid").inc()

    async def _publish(self, message: Outgoing, work: Work) -> None:
        """Hand the message to the producer. When the broker acknowledges it, it is counted
        and its input offset may be committed. If the broker refuses it as too large, a
        smaller one is sent instead; if it fails otherwise, it is sent again, for an
        unacknowledged input is never committed."""
        span, message = self.tracing.publish(work.span, message)
        try:
            delivery = await self.publisher.enqueue(message)
        except TOO_LARGE as exc:
            self.tracing.end(span, error=str(exc))
            self._later(self._resend(message, work, exc))
            return

        def delivered(future: asyncio.Future[object]) -> None:
            if future.cancelled() or future.exception() is not None:
                reason = "cancelled" if future.cancelled() else future.exception()
                self.tracing.end(span, error=str(reason))
                self._later(self._resend(message, work, reason))
                return
            self.publisher.outage.succeeded()
            self.tracing.end(span)
            self.tracing.end(work.span)
            if message.acknowledged is not None:
                try:
                    message.acknowledged()
                except Exception:  # metrics must never keep a record from finishing
                    log.exception("cannot count an acknowledged message")
                    self.metrics.internal_errors.inc()
            self.tracker.done(work.ticket)
            self._stuck.discard(work.ticket)
            self._pending.release()

        delivery.add_done_callback(delivered)

    async def _resend(self, message: Outgoing, work: Work, reason: object) -> None:
        if isinstance(reason, TOO_LARGE) and message.smaller is not None:
            replacement = message.smaller()
            if replacement is not None:
                log.warning("%d bytes for %s refused as too large; sending a smaller message",
                            len(message.value), message.topic)
                await self._publish(replacement, work)
                return
        self.publisher.outage.failed(reason)
        await asyncio.sleep(self.publisher.backoff())
        await self._publish(message, work)

    def _later(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- offsets -------------------------------------------------------------------------

    async def _commit_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.commit_interval)
            self._follow_backend()
            await self._commit()
            await self._observe_lag()
            await self._watch_broker()

    async def _watch_broker(self, every: float = 2.0) -> None:
        """One line when the broker stops answering and one when it answers again, with
        how long it was gone: the Kafka client's own per-attempt errors are held back."""
        if time.monotonic() - self._watched < every:
            return
        self._watched = time.monotonic()
        if await self.broker.ping(timeout=1.0):
            self._reachable.succeeded()
        else:
            self._reachable.failed("no answer to a metadata request")

    def _follow_backend(self) -> None:
        """Stop fetching while the monitor backend is out and the outage is waited for
        (records wait uncommitted and lag grows, so the lag alert fires); fetch again once
        it answers, or once the outage budget is spent and the fail policy applies."""
        consumer = self._subscriber.consumer
        hold = self.backend.breaker.holding() and not self._draining
        if consumer is None or hold == self._paused:
            return
        self._paused = hold
        if hold:
            consumer.pause(*consumer.assignment())
        else:
            consumer.resume(*consumer.assignment())
        self.metrics.backend_available.set(0 if hold else 1)

    async def _commit(self, only: set[TopicPartition] | None = None) -> None:
        consumer = self._subscriber.consumer
        if consumer is None:
            return
        owned = consumer.assignment()
        positions = {
            tp: position
            for tp, position in self.tracker.committable(only).items()
            if tp in owned
        }
        if not positions:
            return
        try:
            await consumer.commit(positions)
        except KafkaError as exc:  # a rebalance or an outage: the next commit catches up
            self._commits.failed(exc)
            return
        self._commits.succeeded()
        self.tracker.committed(positions)

    async def _observe_lag(self) -> None:
        """Per partition: the end offset (from the last fetch) minus where a restart would
        resume. Growing lag with a steady input rate means the gateway is falling behind."""
        consumer = self._subscriber.consumer
        if consumer is None:
            return
        for tp in consumer.assignment():
            end = consumer.highwater(tp)
            if end is None:  # not fetched from yet
                continue
            resume = self.tracker.resume_point(tp)
            if resume is None:
                try:
                    resume = await consumer.position(tp)
                except KafkaError:  # unassigned meanwhile
                    continue
            self.metrics.observe_lag(tp.topic, tp.partition, max(0, end - resume))


# room for the key, headers and record framing around a verdict's JSON
ENVELOPE = 2048


class _CommitOnRevoke(ConsumerRebalanceListener):  # type: ignore[misc]
    """Commit finished work before partitions move, then forget them."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self._gateway._commit(set(revoked))
        self._gateway.tracker.forget(set(revoked))
        for tp in revoked:
            self._gateway.metrics.forget_partition(tp.topic, tp.partition)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        log.info("assigned %s", sorted(f"{tp.topic}/{tp.partition}" for tp in assigned))
        consumer = self._gateway._subscriber.consumer
        if self._gateway._paused and consumer is not None:  # still waiting out an outage
            consumer.pause(*assigned)


def tune_gc() -> None:
    """Freeze what start-up allocated and collect young objects less often. The cyclic
    collector rescanning the long-lived heap cost about 40% of the per-record time
    (benchmarks/throughput.py); records' own objects die by reference counting anyway."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


async def run_until_signalled(settings: GatewaySettings, monitor: Monitor,
                              tracing: Tracing | None = None) -> None:
    """``serve``: run until SIGTERM or SIGINT, then drain within the grace period."""
    gateway = Gateway(settings, monitor, tracing=tracing)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await gateway.start()
    tune_gc()
    try:
        await stop.wait()
    finally:
        log.info("stopping: draining in-flight work for up to %gs",
                 gateway.settings.shutdown_grace)
        with contextlib.suppress(asyncio.CancelledError):
            await gateway.stop()
