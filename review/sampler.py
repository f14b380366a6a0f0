"""The review sampler: its own consumer group on the verdict topic, so the gateway's path
is untouched. A picked verdict becomes a review request with the trajectory it judged;
a batch's offsets are committed only once every request of the batch is acknowledged,
and picks are a fixed function of the verdict (``sampling.pick``), so after a crash the
verdicts read again are picked exactly as before: none lost, none picked twice (a request
sent again is the same request, deduped on its ``id``)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from pydantic import ValidationError

from monitor_gateway.client import from_start
from monitor_gateway.schema import ReviewRequest, Trajectory, Verdict, utcnow

from .sampling import Design, pick
from .settings import ReviewSettings

log = logging.getLogger("review.sampler")
TRAJECTORIES_KEPT = 100_000  # the input topic's latest trajectories, by id


class TrajectoryIndex:
    """The input topic read from its start without a group, the latest trajectories kept
    by id: what a review request shows the reviewer."""

    def __init__(self, settings: ReviewSettings) -> None:
        self.settings = settings
        self._kept: OrderedDict[str, Trajectory] = OrderedDict()
        self._read: dict[TopicPartition, int] = {}  # the next offset to read
        self._fetched_at = 0.0
        self._consumer: AIOKafkaConsumer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._consumer = await from_start(self.settings, [self.settings.input_topic])
        self._task = asyncio.create_task(self._follow())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._consumer is not None:
            await self._consumer.stop()

    async def _follow(self) -> None:
        assert self._consumer is not None
        while True:
            batches = await self._consumer.getmany(timeout_ms=200)
            for tp, records in batches.items():
                for record in records:
                    try:
                        trajectory = Trajectory.model_validate_json(record.value or b"")
                    except ValidationError:
                        continue  # the gateway dead-lettered it: it has no verdict
                    self._kept[trajectory.id] = trajectory
                    self._kept.move_to_end(trajectory.id)
                    if len(self._kept) > TRAJECTORIES_KEPT:
                        self._kept.popitem(last=False)
                self._read[tp] = records[-1].offset + 1
            self._fetched_at = time.monotonic()

    def _at_end(self) -> bool:
        assert self._consumer is not None
        return all((self._consumer.highwater(tp) or 0) <= self._read.get(tp, 0)
                   for tp in self._consumer.assignment())

    async def get(self, trajectory_id: str, wait: float) -> Trajectory | None:
        """The trajectory, once read; ``None`` if the topic was read to its end after this
        was asked and it was not there, or after ``wait`` seconds. If the reader has
        stopped on an error, that error: the sampler stops with it (and is restarted, or
        fails the page's health), where it would otherwise send every pick on without its
        trajectory."""
        asked = time.monotonic()
        while trajectory_id not in self._kept:
            if self._task is not None and self._task.done() and not self._task.cancelled():
                self._task.result()  # its error: picks must not go out without trajectories
            if (self._fetched_at > asked and self._at_end()) or time.monotonic() - asked > wait:
                return None
            await asyncio.sleep(0.02)
        return self._kept[trajectory_id]


class Sampler:
    def __init__(self, settings: ReviewSettings, design: Design | None = None) -> None:
        self.settings = settings
        self.design = design or settings.design()
        self.read = self.picked = 0

    async def run(self, stop: asyncio.Event) -> None:
        # made here, not in __init__: aiokafka binds a client to the running loop
        args = self.settings.client_args()
        self._consumer = AIOKafkaConsumer(
            self.settings.verdict_topic, group_id=self.settings.sampler_group,
            enable_auto_commit=False, auto_offset_reset="earliest", fetch_max_wait_ms=200,
            **args)
        self._producer = AIOKafkaProducer(acks="all", linger_ms=5, **args)
        self._index = TrajectoryIndex(self.settings)
        await self._producer.start()
        await self._consumer.start()
        try:
            await self._index.start()
            while not stop.is_set():
                batches = await self._consumer.getmany(
                    timeout_ms=500, max_records=self.settings.sampler_batch)
                await self._batch(batches)
        finally:
            await self._index.stop()
            await self._consumer.stop()
            await self._producer.stop()

    async def _batch(self, batches: dict[TopicPartition, list[ConsumerRecord[bytes, bytes]]]
                     ) -> None:
        """Requests for the batch's picks, acknowledged; then the batch's offsets."""
        sent = []
        for records in batches.values():
            for record in records:
                self.read += 1
                request = await self._request(record.value)
                if request is not None:
                    self.picked += 1
                    sent.append(await self._producer.send(
                        self.settings.review_topic, request.model_dump_json().encode(),
                        key=request.verdict.trajectory_id.encode()))
        await asyncio.gather(*sent)
        if batches:
            await self._consumer.commit({tp: records[-1].offset + 1
                                         for tp, records in batches.items()})
            log.info("read %d verdicts, picked %d for review", self.read, self.picked)

    async def _request(self, value: bytes | None) -> ReviewRequest | None:
        try:
            verdict = Verdict.model_validate_json(value or b"")
        except ValidationError:
            return None  # not a verdict: someone else's record on the topic
        sampling = pick(verdict, self.design)
        if sampling is None:
            return None
        trajectory = await self._index.get(verdict.trajectory_id, self.settings.trajectory_wait)
        return ReviewRequest(id=f"{verdict.trajectory_id}@{verdict.monitor.version}",
                             verdict=verdict, trajectory=trajectory, sampling=sampling,
                             requested_at=utcnow())
