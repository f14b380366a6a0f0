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
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

from aiohttp import web
from aiokafka import ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.errors import KafkaError
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from faststream.kafka.prometheus import KafkaPrometheusMiddleware
from faststream.message import StreamMessage
from faststream.middlewares import AckPolicy
from opentelemetry.trace import Span
from prometheus_client import CollectorRegistry

from .calling import Deadlines, MonitorFailure, RetryPolicy, call_monitor, judge_inline
from .config import load_config
from .evidence import ground
from .ingest import (
    REPLAY_HEADERS,
    Rejection,
    dead_letter,
    decode_headers,
    parse_trajectory,
    replay_tag,
)
from .metrics import Metrics, serve_http
from .monitors.base import Closeable, InlineMonitor, Judgement, Monitor
from .offsets import OffsetTracker, Ticket
from .publish import Outgoing, Publisher
from .schema import MonitorCard, Trajectory, Verdict, utcnow
from .settings import GatewaySettings
from .tracing import Tracing, from_settings
from .verdict import Thresholds, build_verdict

log = logging.getLogger(__name__)


class Work(NamedTuple):
    """One input record on its way through: where it came from, when, and its trace."""

    record: ConsumerRecord[bytes, bytes]
    ticket: Ticket
    received_at: datetime
    started: float
    span: Span | None


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
        config = load_config(settings.monitor_config)
        self._measured = config.last_replay.describe() if config.last_replay else None
        self._cards: dict[MonitorCard, MonitorCard] = {}
        self.thresholds = Thresholds(
            default=config.thresholds.get("default", settings.threshold),
            by_category={k: v for k, v in config.thresholds.items() if k != "default"},
        )
        # CONCURRENCY bounds monitor calls; MAX_PENDING bounds everything fetched and not yet
        # acknowledged, so waiting for the broker's ack never holds a monitor slot.
        self._monitor_slots = asyncio.Semaphore(settings.concurrency)
        self._pending = asyncio.Semaphore(max(settings.max_pending, settings.concurrency))
        self._tasks: set[asyncio.Task[None]] = set()
        self._draining = False
        self._commit_task: asyncio.Task[None] | None = None
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
            auto_offset_reset=settings.auto_offset_reset,
            listener=_CommitOnRevoke(self),
            max_partition_fetch_bytes=max(1024 * 1024, settings.max_message_bytes + 1024),
        )

        async def on_batch(message: KafkaMessage) -> None:
            records = message.raw_message
            await self._dispatch(records if isinstance(records, tuple) else (records,))

        async def raw(message: StreamMessage[Any]) -> None:
            """No decoding: FastStream would JSON-decode every record; ingest does it once."""

        self._subscriber(on_batch, decoder=raw)

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
        """Connected and consuming: the consume loop runs and the broker answers."""
        if self._draining or not self._subscriber.running or self._subscriber.consumer is None:
            return False
        return bool(await self.broker.ping(timeout=2.0))

    # --- data path -----------------------------------------------------------------------

    async def _dispatch(self, records: tuple[ConsumerRecord[bytes, bytes], ...]) -> None:
        """Runs on the fetch loop. A synchronous monitor (rules, classifier) judges right
        here; an asynchronous one (an LLM call) gets a task, so records of one partition
        are judged concurrently. Either way nobody waits here for the broker's ack."""
        for record in records:
            # Backpressure: the fetch loop waits here for room, and is the only waiter, so
            # a slow monitor or broker stalls fetching instead of piling up work.
            await self._pending.acquire()
            if self._draining:
                self._pending.release()
                return
            ticket = self.tracker.start(TopicPartition(record.topic, record.partition),
                                        record.offset)
            work = Work(record, ticket, utcnow(), time.perf_counter(), self.tracing.consume(record))
            parsed = parse_trajectory(record.value, self.settings.max_message_bytes)
            if isinstance(parsed, Rejection):
                await self._dead_letter(work, parsed)
            elif self._inline is not None:
                span = self.tracing.monitor(work.span, self.monitor.card)
                outcome = judge_inline(self._inline, parsed)
                self.tracing.judged(span, outcome)
                await self._verdict(work, parsed, outcome, time.perf_counter() - work.started)
            else:
                await self._monitor_slots.acquire()
                task = asyncio.create_task(self._judge(work, parsed))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _judge(self, work: Work, trajectory: Trajectory) -> None:
        """An asynchronous monitor call, holding a monitor slot until it has answered."""
        span = self.tracing.monitor(work.span, self.monitor.card)
        try:
            called = time.perf_counter()
            with self.tracing.current(span):
                outcome = await call_monitor(self.monitor, trajectory, self.retry,
                                             self.deadlines)
            seconds = time.perf_counter() - called
        finally:
            self._monitor_slots.release()
        self.tracing.judged(span, outcome)
        await self._verdict(work, trajectory, outcome, seconds)

    async def _verdict(self, work: Work, trajectory: Trajectory,
                       outcome: Judgement | MonitorFailure, monitor_seconds: float) -> None:
        record = work.record
        # the replay headers are read here, after the monitor: it never sees them
        tag = replay_tag(decode_headers(record.headers)) if record.headers else None

        def build(outcome: Judgement | MonitorFailure) -> Verdict:
            return build_verdict(
                trajectory, outcome,
                ground(trajectory, outcome.quotes) if isinstance(outcome, Judgement) else [],
                card=self._card(outcome),
                thresholds=self.thresholds,
                fail_policy=self.settings.fail_policy,
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

        echoed = [(k, v or b"") for k, v in record.headers if k in REPLAY_HEADERS]
        await self._publish(Outgoing(self.settings.verdict_topic,
                                     verdict.model_dump_json().encode(),
                                     trajectory.id.encode(), echoed), work, acknowledged)

    def _labelled(self, card: MonitorCard) -> MonitorCard:
        """The card with the monitor's last measured figures added to its label (made once
        a card: a cascade has one a stage)."""
        if self._measured is None:
            return card
        if (labelled := self._cards.get(card)) is None:
            labelled = self._cards[card] = card.model_copy(
                update={"label": f"{card.label}; {self._measured}"})
        return labelled

    def _card(self, outcome: Judgement | MonitorFailure) -> MonitorCard:
        """The monitor that judged: a cascade names its deciding stage."""
        if isinstance(outcome, Judgement) and outcome.card is not None:
            return self._labelled(outcome.card)
        return self._labelled(self.monitor.card)

    async def _dead_letter(self, work: Work, why: Rejection) -> None:
        record = work.record
        letter = dead_letter(
            why, topic=record.topic, partition=record.partition, offset=record.offset,
            key=record.key, value=record.value,
        )
        log.info("dead letter %s at %s/%d/%d: %s", why.error, record.topic, record.partition,
                 record.offset, why.detail)
        self.tracing.rejected(work.span, why.error)
        await self._publish(
            Outgoing(self.settings.dlq_topic, letter.model_dump_json().encode(), record.key, []),
            work, self._count_invalid)

    def _count_invalid(self) -> None:
        self.metrics.trajectories.labels(outcome="invalid").inc()

    async def _publish(self, message: Outgoing, work: Work,
                       acknowledged: Callable[[], None]) -> None:
        """Hand the message to the producer. When the broker acknowledges it, it is counted
        and its input offset may be committed; if the broker refuses it, it is sent again,
        for an unacknowledged input is never committed."""
        span, message = self.tracing.publish(work.span, message)
        delivery = await self.publisher.enqueue(message)

        def delivered(future: asyncio.Future[object]) -> None:
            if future.cancelled() or future.exception() is not None:
                reason = "cancelled" if future.cancelled() else future.exception()
                log.warning("publish to %s failed (%s); sending again", message.topic, reason)
                self.tracing.end(span, error=str(reason))
                task = asyncio.create_task(self._republish(message, work, acknowledged))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                return
            self.tracing.end(span)
            self.tracing.end(work.span)
            acknowledged()
            self.tracker.done(work.ticket)
            self._pending.release()

        delivery.add_done_callback(delivered)

    async def _republish(self, message: Outgoing, work: Work,
                         acknowledged: Callable[[], None]) -> None:
        await asyncio.sleep(self.publisher.backoff())
        await self._publish(message, work, acknowledged)

    # --- offsets -------------------------------------------------------------------------

    async def _commit_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.commit_interval)
            await self._commit()
            await self._observe_lag()

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
        except KafkaError as exc:  # a rebalance in progress: the next owner re-reads
            log.warning("offset commit failed: %s", exc)
            return
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
