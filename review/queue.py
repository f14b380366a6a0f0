"""The review queue: the request and label topics read from their start without a group,
so that after a restart the queue and every figure are what the topics say. A request is
pending until its (trajectory, monitor version) has a label."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import KafkaError
from pydantic import ValidationError

from monitor_gateway.client import from_start, latest_labels
from monitor_gateway.schema import Label, ReviewRequest

from .estimate import Estimate, Group, by_group, labelled
from .settings import ReviewSettings


class ReviewQueue:
    def __init__(self, settings: ReviewSettings) -> None:
        self.settings = settings
        self.requests: dict[str, ReviewRequest] = {}  # by id, in the order first read
        self.labels: dict[tuple[str, str], Label] = {}
        self.changed = asyncio.Event()  # set whenever something new is read
        self._consumer: AIOKafkaConsumer | None = None
        self._producer: AIOKafkaProducer | None = None
        self.reader: asyncio.Task[None] | None = None  # follows the topics, once started

    async def start(self) -> None:
        args = self.settings.client_args()
        self._producer = AIOKafkaProducer(acks="all", linger_ms=0, **args)
        await self._producer.start()
        self._consumer = await from_start(
            self.settings, [self.settings.review_topic, self.settings.labels_topic])
        self.reader = asyncio.create_task(self._follow())

    async def stop(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)
        for client in (self._consumer, self._producer):
            if client is not None:
                try:
                    await client.stop()
                except asyncio.CancelledError:
                    # aiokafka's consumer, stopped while the broker is away, lets the
                    # cancellation of its own fetch task out of stop(): only ours goes on
                    task = asyncio.current_task()
                    if task is not None and task.cancelling():
                        raise

    async def _follow(self) -> None:
        assert self._consumer is not None
        while True:
            batches = await self._consumer.getmany(timeout_ms=200)
            for tp, records in batches.items():
                for record in records:
                    with contextlib.suppress(ValidationError):
                        if tp.topic == self.settings.review_topic:
                            request = ReviewRequest.model_validate_json(record.value or b"")
                            self.requests.setdefault(request.id, request)
                        else:
                            self._add(Label.model_validate_json(record.value or b""))
            if batches:
                self.changed.set()

    async def reachable(self, timeout: float) -> bool:
        """Whether the broker answers the queue's producer within ``timeout`` seconds."""
        assert self._producer is not None
        try:
            await asyncio.wait_for(self._producer.client.fetch_all_metadata(), timeout)
        except (KafkaError, TimeoutError):
            return False
        return True

    def _add(self, label: Label) -> None:
        key = (label.trajectory_id, label.monitor.version)
        known = self.labels.get(key)
        self.labels[key] = latest_labels([label] if known is None else [known, label])[0]

    def pending(self) -> list[ReviewRequest]:
        return [r for r in self.requests.values()
                if (r.verdict.trajectory_id, r.verdict.monitor.version) not in self.labels]

    def find(self, trajectory_id: str) -> ReviewRequest | None:
        """The trajectory's request: the pending one if there is one, else the latest."""
        found = [r for r in self.requests.values() if r.verdict.trajectory_id == trajectory_id]
        waiting = [r for r in found
                   if (r.verdict.trajectory_id, r.verdict.monitor.version) not in self.labels]
        chosen = waiting or found
        return chosen[-1] if chosen else None

    async def publish(self, label: Label) -> None:
        """Write the label, acknowledged, and count it at once."""
        assert self._producer is not None
        await self._producer.send_and_wait(self.settings.labels_topic,
                                           label.model_dump_json().encode(),
                                           key=label.trajectory_id.encode())
        self._add(label)

    def estimates(self) -> dict[Group, tuple[Estimate, Estimate]]:
        return by_group([labelled(label) for label in self.labels.values()])

    def counts(self) -> Iterable[tuple[str, str, str, int]]:
        """Labels per (monitor version, category or ``all``, decision)."""
        tally: dict[tuple[str, str, str], int] = {}
        for label in self.labels.values():
            item = labelled(label)
            for category in ("all", *([item.category] if item.category else [])):
                key = (item.version, category, label.decision)
                tally[key] = tally.get(key, 0) + 1
        return [(*key, n) for key, n in sorted(tally.items())]
