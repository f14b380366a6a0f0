"""Offsets: which records are in flight, committing what is done, rebalances, and lag.

The committer owns the :class:`~monitor_gateway.offsets.OffsetTracker`. Records are
registered when fetched and marked done when their verdict or dead letter is acknowledged;
its loop commits, per partition, only the position below which every record is done
(at-least-once), and reports each assigned partition's lag.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.errors import KafkaError

from .logs import Outage
from .metrics import Metrics
from .offsets import OffsetTracker, Ticket

log = logging.getLogger(__name__)


class Committer:
    def __init__(self, consumer: Callable[[], AIOKafkaConsumer | None], metrics: Metrics,
                 interval: float) -> None:
        self._consumer = consumer
        self._metrics = metrics
        self.interval = interval
        self.tracker = OffsetTracker()
        self._failures = Outage("offset commits", log)
        metrics.inflight.set_function(self.tracker.in_flight)

    def register(self, records: Sequence[ConsumerRecord[bytes, bytes]]) -> list[Ticket]:
        """Every fetched record, before any is worked on: no later fault can let a commit
        pass a record that has no outcome yet."""
        start = self.tracker.start
        return [start(TopicPartition(r.topic, r.partition), r.offset) for r in records]

    def done(self, ticket: Ticket) -> None:
        self.tracker.done(ticket)

    async def run(self) -> None:
        """Commit and report lag every ``interval`` seconds."""
        while True:
            await asyncio.sleep(self.interval)
            await self.commit()
            await self.observe_lag()

    async def commit(self, only: set[TopicPartition] | None = None) -> None:
        consumer = self._consumer()
        if consumer is None:
            return
        owned = consumer.assignment()
        positions = {tp: position for tp, position in self.tracker.committable(only).items()
                     if tp in owned}
        if not positions:
            return
        try:
            await consumer.commit(positions)
        except KafkaError as exc:  # a rebalance or an outage: the next commit catches up
            self._failures.failed(exc)
            return
        self._failures.succeeded()
        self.tracker.committed(positions)

    async def observe_lag(self) -> None:
        """Per partition: the end offset (from the last fetch) minus where a restart would
        resume. Growing lag with a steady input rate means the gateway is falling behind."""
        consumer = self._consumer()
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
            self._metrics.observe_lag(tp.topic, tp.partition, max(0, end - resume))

    def listener(self, on_assigned: Callable[[set[TopicPartition]], None],
                 on_revoked: Callable[[set[TopicPartition]], None]
                 ) -> ConsumerRebalanceListener:
        return _CommitOnRevoke(self, on_assigned, on_revoked)


class _CommitOnRevoke(ConsumerRebalanceListener):  # type: ignore[misc]
    """Commit finished work before partitions move, then forget them (and tell the
    gateway, which drops the open runs it held of them)."""

    def __init__(self, committer: Committer,
                 on_assigned: Callable[[set[TopicPartition]], None],
                 on_revoked: Callable[[set[TopicPartition]], None]) -> None:
        self._committer = committer
        self._on_assigned = on_assigned
        self._on_revoked = on_revoked

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self._committer.commit(set(revoked))
        self._committer.tracker.forget(set(revoked))
        self._on_revoked(set(revoked))
        for tp in revoked:
            self._committer._metrics.forget_partition(tp.topic, tp.partition)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        log.info("assigned %s", sorted(f"{tp.topic}/{tp.partition}" for tp in assigned))
        self._on_assigned(assigned)
