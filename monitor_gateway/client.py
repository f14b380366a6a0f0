"""The client side: send trajectories to the gateway, read its verdicts.

    from monitor_gateway.client import TrajectoryProducer, verdicts

    async with TrajectoryProducer() as producer:          # MONITOR_GATEWAY_* settings
        await producer.send({"id": "run-1", "request": "Fix the test.",
                             "response": "Done.", "steps": []})
    async for verdict in verdicts():                       # follows the verdict topic
        print(verdict.trajectory_id, verdict.flagged, verdict.monitor.label)

``SyncTrajectoryProducer`` does the same for code without an event loop; ``judged(trajectories)``
sends and yields each one's verdict as it comes (what ``send --wait`` prints). A trajectory is
validated with the model the gateway uses before it is sent (a refused one
raises ``pydantic.ValidationError`` here instead of becoming a dead letter there), keyed by
its id (so its verdict lands on the same partition number), and carries the caller's W3C
trace context when OpenTelemetry is installed and a span is current.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from pydantic import BaseModel, ValidationError

from .ingest import Rejection, parse_trajectory
from .schema import DeadLetter, Label, Trajectory, Verdict
from .settings import ENV_PREFIX, KafkaSettings

M = TypeVar("M", bound=BaseModel)


class TopicMissing(RuntimeError):
    """A topic the client needs is not on the cluster; the message is one line."""


class TrajectoryProducer:
    """Sends trajectories to the input topic; waits for the broker's acknowledgement."""

    def __init__(self, settings: KafkaSettings | None = None) -> None:
        self.settings = settings or KafkaSettings()
        self._producer: AIOKafkaProducer | None = None

    async def __aenter__(self) -> TrajectoryProducer:
        # made here, not in __init__: aiokafka binds a producer to the running loop
        self._producer = AIOKafkaProducer(acks="all", linger_ms=5,
                                          **self.settings.client_args())
        try:
            await self._producer.start()
        except BaseException:
            await self._producer.stop()
            raise
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._producer is not None:
            await self._producer.stop()

    async def send(self, trajectory: Trajectory | dict[str, Any]) -> None:
        if self._producer is None:
            raise RuntimeError("use TrajectoryProducer as 'async with TrajectoryProducer()'")
        if not isinstance(trajectory, Trajectory):
            trajectory = Trajectory.model_validate(trajectory)
        await self._producer.send_and_wait(
            self.settings.input_topic, trajectory.model_dump_json(exclude_defaults=True).encode(),
            key=trajectory.id.encode(), headers=_trace_context())


class SyncTrajectoryProducer:
    """:class:`TrajectoryProducer` for code without an event loop (a script, a thread of a
    synchronous agent): it runs its own. Not for use inside a running loop."""

    def __init__(self, settings: KafkaSettings | None = None) -> None:
        self._runner = asyncio.Runner()
        self._producer = TrajectoryProducer(settings)

    def __enter__(self) -> SyncTrajectoryProducer:
        self._runner.run(self._producer.__aenter__())
        return self

    def __exit__(self, *_: object) -> None:
        try:
            self._runner.run(self._producer.__aexit__())
        finally:
            self._runner.close()

    def send(self, trajectory: Trajectory | dict[str, Any]) -> None:
        self._runner.run(self._producer.send(trajectory))


def _trace_context() -> list[tuple[str, bytes]]:
    try:
        from opentelemetry.propagate import inject
    except ImportError:
        return []
    carrier: dict[str, str] = {}
    inject(carrier)
    return [(name, value.encode()) for name, value in carrier.items()]


async def verdicts(settings: KafkaSettings | None = None, *, dead_letters: bool = False,
                   trajectories: bool = False, from_beginning: bool = False,
                   ) -> AsyncIterator[Verdict | DeadLetter | Trajectory]:
    """Every verdict (and dead letter, and input trajectory, if asked) from now on, or from
    the topics' start. Reads without a consumer group: it commits nothing and takes
    nothing from others. Trajectories are what a verdict's evidence offsets point into."""
    settings = settings or KafkaSettings()
    models: dict[str, type[Verdict | DeadLetter | Trajectory]] = {settings.verdict_topic: Verdict}
    if dead_letters:
        models[settings.dlq_topic] = DeadLetter
    if trajectories:
        models[settings.input_topic] = Trajectory
    consumer = AIOKafkaConsumer(
        *models, group_id=None, enable_auto_commit=False, fetch_max_wait_ms=100,
        auto_offset_reset="earliest" if from_beginning else "latest",
        **settings.client_args())
    try:
        await consumer.start()
        async for record in consumer:
            try:
                yield models[record.topic].model_validate_json(record.value or b"")
            except ValidationError:
                continue  # not ours, or not valid: someone else's record on the topic
    finally:
        await consumer.stop()


async def verdicts_at_end(settings: KafkaSettings, fetch_max_wait_ms: int = 10
                          ) -> AIOKafkaConsumer:
    """A started consumer of the verdict topic, positioned at its end now (no group): every
    verdict of what is sent after this returns will be read by it. The caller stops it."""
    consumer = AIOKafkaConsumer(group_id=None, enable_auto_commit=False,
                                fetch_max_wait_ms=fetch_max_wait_ms, **settings.client_args())
    await consumer.start()
    try:
        partitions = consumer.partitions_for_topic(settings.verdict_topic) or set()
        if not partitions:
            await consumer._client.force_metadata_update()
            partitions = consumer.partitions_for_topic(settings.verdict_topic) or set()
        if not partitions:
            raise TopicMissing(f"no topic {settings.verdict_topic} on {settings.kafka_bootstrap}"
                               f" to read verdicts from: create it, or set --verdict-topic or "
                               f"{ENV_PREFIX}VERDICT_TOPIC")
        assigned = [TopicPartition(settings.verdict_topic, p) for p in sorted(partitions)]
        consumer.assign(assigned)
        await consumer.seek_to_end(*assigned)
        for tp in assigned:  # resolve the positions now, before anything is sent
            await consumer.position(tp)
    except BaseException:
        await consumer.stop()
        raise
    return consumer


async def judged(trajectories: Sequence[Trajectory], settings: KafkaSettings | None = None,
                 timeout: float = 30.0) -> AsyncIterator[Verdict]:
    """Send ``trajectories`` and yield each one's verdict as it comes (the first, should
    at-least-once delivery bring two), until all have one or ``timeout`` seconds pass
    without a new one."""
    settings = settings or KafkaSettings()
    waiting = {t.id for t in trajectories}
    consumer = await verdicts_at_end(settings, fetch_max_wait_ms=100)
    try:
        async with TrajectoryProducer(settings) as producer:
            for trajectory in trajectories:
                await producer.send(trajectory)
        deadline = time.monotonic() + timeout
        while waiting and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=200)
            for record in (r for records in batches.values() for r in records):
                try:
                    verdict = Verdict.model_validate_json(record.value or b"")
                except ValidationError:
                    continue
                if verdict.trajectory_id in waiting:
                    waiting.discard(verdict.trajectory_id)
                    deadline = time.monotonic() + timeout
                    yield verdict
    finally:
        await consumer.stop()


def read_trajectories(text: str, max_bytes: int) -> Iterator[tuple[int, Trajectory | Rejection]]:
    """Each trajectory of a file, with the line it starts on: one JSON object (which may
    span lines) or JSON Lines. A line that is no valid trajectory is a ``Rejection`` with
    the reason the gateway would give."""
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        yield text[:text.index("{")].count("\n") + 1, parse_trajectory(text.encode(), max_bytes)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, parse_trajectory(line.encode(), max_bytes)


def latest_labels(labels: Iterable[Label]) -> list[Label]:
    """One label a (trajectory, monitor version): the latest given (a reviewer may correct
    one); a label read twice (at-least-once delivery) counts once."""
    chosen: dict[tuple[str, str], Label] = {}
    for label in labels:
        key = (label.trajectory_id, label.monitor.version)
        if key not in chosen or label.labelled_at >= chosen[key].labelled_at:
            chosen[key] = label
    return list(chosen.values())


async def read_labels(settings: KafkaSettings | None = None, idle: float = 1.0) -> list[Label]:
    """Every label on the labels topic now, the latest of each (trajectory, monitor
    version)."""
    settings = settings or KafkaSettings()
    return latest_labels(await read_topic(settings, settings.labels_topic, Label, idle))


async def read_topic(settings: KafkaSettings, topic: str, model: type[M], idle: float = 1.0
                     ) -> list[M]:
    """Every record of ``topic`` now that ``model`` reads (read without a group, from the
    start to the end it had when this began); a record it cannot read is skipped."""
    consumer = AIOKafkaConsumer(group_id=None, enable_auto_commit=False, fetch_max_wait_ms=100,
                                **settings.client_args())
    await consumer.start()
    try:
        found = consumer.partitions_for_topic(topic)
        if not found:
            await consumer._client.force_metadata_update()
            found = consumer.partitions_for_topic(topic)
        if not found:
            raise TopicMissing(f"no topic {topic} on {settings.kafka_bootstrap}")
        assigned = [TopicPartition(topic, p) for p in sorted(found)]
        consumer.assign(assigned)
        await consumer.seek_to_beginning(*assigned)
        ends = await consumer.end_offsets(assigned)
        read: list[M] = []
        deadline = time.monotonic() + idle
        while any([await consumer.position(tp) < end for tp, end in ends.items()]):
            batches = await consumer.getmany(timeout_ms=200)
            for record in (r for records in batches.values() for r in records):
                with contextlib.suppress(ValidationError):
                    read.append(model.model_validate_json(record.value or b""))
                deadline = time.monotonic() + idle
            if time.monotonic() > deadline:
                break
        return read
    finally:
        await consumer.stop()
