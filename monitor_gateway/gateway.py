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
import logging
import signal
import time
from typing import Any

from aiohttp import web
from aiokafka import ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.errors import KafkaError
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from faststream.kafka.prometheus import KafkaPrometheusMiddleware
from faststream.message import StreamMessage
from faststream.middlewares import AckPolicy
from prometheus_client import CollectorRegistry

from .calling import Deadlines, RetryPolicy, call_monitor
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
from .monitors.base import Judgement, Monitor
from .offsets import OffsetTracker, Ticket
from .publish import Publisher
from .schema import ReplayTag, TaskType, Verdict, utcnow
from .settings import GatewaySettings
from .verdict import build_verdict

log = logging.getLogger(__name__)


class Gateway:
    def __init__(
        self,
        settings: GatewaySettings,
        monitor: Monitor,
        registry: CollectorRegistry | None = None,
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
        # CONCURRENCY bounds monitor calls; MAX_PENDING bounds everything fetched and not yet
        # acknowledged, so waiting for the broker's ack never holds a monitor slot.
        self._monitor_slots = asyncio.Semaphore(settings.concurrency)
        self._pending = asyncio.Semaphore(max(settings.max_pending, settings.concurrency))
        self._tasks: set[asyncio.Task[None]] = set()
        self._draining = False
        self._commit_task: asyncio.Task[None] | None = None
        self._http: web.AppRunner | None = None
        self.publisher = Publisher(settings)

        self.broker = KafkaBroker(
            settings.kafka_bootstrap,
            security=settings.security(),
            middlewares=[
                KafkaPrometheusMiddleware(registry=self.registry, app_name="monitor-gateway")
            ],
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
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=self.settings.shutdown_grace)
        await self._commit()
        abandoned = [task for task in self._tasks if not task.done()]
        for task in abandoned:
            task.cancel()
        await asyncio.gather(*abandoned, return_exceptions=True)
        if abandoned:
            log.warning("abandoned %d in-flight trajectories, left uncommitted", len(abandoned))
        if self._commit_task is not None:
            self._commit_task.cancel()
            await asyncio.gather(self._commit_task, return_exceptions=True)
        await self.broker.stop()
        await self.publisher.stop()
        if self._http is not None:
            await self._http.cleanup()

    async def healthy(self) -> bool:
        """Connected and consuming: the consume loop runs and the broker answers."""
        if self._draining or not self._subscriber.running or self._subscriber.consumer is None:
            return False
        return bool(await self.broker.ping(timeout=2.0))

    # --- data path -----------------------------------------------------------------------

    async def _dispatch(self, records: tuple[ConsumerRecord[bytes, bytes], ...]) -> None:
        for record in records:
            # Backpressure: the fetch loop waits here for room, and is the only waiter, so
            # a slow monitor stalls fetching instead of piling up tasks.
            await self._pending.acquire()
            await self._monitor_slots.acquire()
            if self._draining:
                self._monitor_slots.release()
                self._pending.release()
                return
            partition = TopicPartition(record.topic, record.partition)
            ticket = self.tracker.start(partition, record.offset)
            task = asyncio.create_task(self._process(record, ticket))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _process(self, record: ConsumerRecord[bytes, bytes], ticket: Ticket) -> None:
        """Holds a monitor slot until the monitor has answered, and a pending slot until the
        broker has acknowledged the verdict or dead letter."""
        received_at, started = utcnow(), time.perf_counter()
        try:
            try:
                parsed = parse_trajectory(record.value, self.settings.max_message_bytes)
                if not isinstance(parsed, Rejection):
                    monitor_started = time.perf_counter()
                    outcome = await call_monitor(self.monitor, parsed, self.retry,
                                                 self.deadlines)
                    monitor_seconds = time.perf_counter() - monitor_started
            finally:
                self._monitor_slots.release()
            if isinstance(parsed, Rejection):
                await self._dead_letter(record, parsed)
            else:
                verdict = build_verdict(
                    parsed, outcome,
                    ground(parsed, outcome.quotes) if isinstance(outcome, Judgement) else [],
                    card=self.monitor.card,
                    threshold=self.settings.threshold,
                    fail_policy=self.settings.fail_policy,
                    tag=(tag := replay_tag(decode_headers(record.headers))),
                    received_at=received_at,
                    monitor_seconds=monitor_seconds,
                    gateway_seconds=time.perf_counter() - started,
                )
                await self._publish_verdict(record, verdict, tag, parsed.task_type)
            self.tracker.done(ticket)
        finally:
            self._pending.release()

    async def _publish_verdict(self, record: ConsumerRecord[bytes, bytes], verdict: Verdict,
                               tag: ReplayTag | None, task_type: TaskType | None) -> None:
        echoed = [(k, v or b"") for k, v in record.headers if k in REPLAY_HEADERS]
        await self.publisher.send(
            self.settings.verdict_topic, verdict.model_dump_json().encode(),
            key=verdict.trajectory_id.encode(), headers=echoed,
        )
        self.metrics.observe_verdict(verdict, tag, task_type, self.monitor.card.backend)
        self.metrics.end_to_end_latency.observe(max(0.0, time.time() - record.timestamp / 1000))

    async def _dead_letter(self, record: ConsumerRecord[bytes, bytes], why: Rejection) -> None:
        letter = dead_letter(
            why, topic=record.topic, partition=record.partition, offset=record.offset,
            key=record.key, value=record.value,
        )
        log.info("dead letter %s at %s/%d/%d: %s", why.error, record.topic, record.partition,
                 record.offset, why.detail)
        await self.publisher.send(self.settings.dlq_topic, letter.model_dump_json().encode(),
                                  key=record.key, headers=[])
        self.metrics.trajectories.labels(outcome="invalid").inc()

    # --- offsets -------------------------------------------------------------------------

    async def _commit_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.commit_interval)
            await self._commit()

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


class _CommitOnRevoke(ConsumerRebalanceListener):  # type: ignore[misc]
    """Commit finished work before partitions move, then forget them."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self._gateway._commit(set(revoked))
        self._gateway.tracker.forget(set(revoked))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        log.info("assigned %s", sorted(f"{tp.topic}/{tp.partition}" for tp in assigned))


async def run_until_signalled(settings: GatewaySettings, monitor: Monitor) -> None:
    """``serve``: run until SIGTERM or SIGINT, then drain within the grace period."""
    gateway = Gateway(settings, monitor)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await gateway.start()
    try:
        await stop.wait()
    finally:
        log.info("stopping: draining in-flight work for up to %gs",
                 gateway.settings.shutdown_grace)
        with contextlib.suppress(asyncio.CancelledError):
            await gateway.stop()
