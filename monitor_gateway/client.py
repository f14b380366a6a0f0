"""The client side: send trajectories to the gateway, read its verdicts.

    from monitor_gateway.client import TrajectoryProducer, judged, verdicts

    run = {"id": "run-1", "request": "Fix the test.", "response": "Done."}
    async for verdict in judged([run]):                    # sends, then waits for each verdict
        print(verdict.trajectory_id, verdict.flagged)
    async for verdict in verdicts(count=10, timeout=30):   # follows the verdict topic
        print(verdict.trajectory_id, verdict.flagged)

``GuardClient`` asks the pre-execution guard about a proposed tool call before it runs.
``TrajectoryProducer`` (and ``SyncTrajectoryProducer``, for code without an event loop)
only sends: a trajectory whole, or a run step by step as it happens (``start_run``, then
the sender's ``step`` and ``end``; a gateway consuming the step topic judges each step as
it arrives). Everything here takes a trajectory as a :class:`Trajectory` or as a dict of the
same fields; it is validated with the model the gateway uses before it is sent (a refused
one raises ``pydantic.ValidationError`` here instead of becoming a dead letter there),
keyed by its id (so its verdict lands on the same partition number), and carries the
caller's W3C trace context when OpenTelemetry is installed and a span is current.

A partition's end is never taken from one answer to "where does it end": some brokers (the
embedded one) answer with the first offset of the partition's last batch, below its end.
The end is the high watermark of a fetch made from there (:func:`seek_to_end`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import aiohttp
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.client import AIOKafkaClient
from aiokafka.errors import KafkaConnectionError
from pydantic import BaseModel, ValidationError

from .ingest import Rejection, parse_trajectory
from .schema import (
    DeadLetter,
    GuardDecision,
    Label,
    RunEnd,
    RunStart,
    RunStep,
    Step,
    TaskType,
    ToolCall,
    Trajectory,
    Verdict,
    run_messages,
)
from .settings import ENV_PREFIX, KafkaSettings, flag

TrajectoryLike = Trajectory | Mapping[str, Any]  # what every function here takes
M = TypeVar("M", Verdict, Verdict | DeadLetter | Trajectory)
CONNECT_TIMEOUT = 5.0  # seconds for a broker to answer at all: a listener that is not Kafka

Model = TypeVar("Model", bound=BaseModel)


class TopicMissing(RuntimeError):
    """A topic the client needs is not on the cluster; the message is one line."""


def as_trajectory(trajectory: TrajectoryLike) -> Trajectory:
    """A trajectory as the gateway reads it; a dict is validated (``ValidationError``)."""
    if isinstance(trajectory, Trajectory):
        return trajectory
    return Trajectory.model_validate(trajectory)


async def reach(settings: KafkaSettings, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise ``KafkaConnectionError`` unless a broker answers at the bootstrap address within
    ``timeout`` seconds. Kafka clients wait their whole request timeout (40 s) for an answer
    from a port that accepts connections and says nothing, such as another service's."""
    client = AIOKafkaClient(request_timeout_ms=int(timeout * 1000), **settings.client_args())
    try:
        await client.bootstrap()
    finally:
        await client.close()


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
            await reach(self.settings)
            await self._producer.start()
        except BaseException:
            await self._producer.stop()
            raise
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._producer is not None:
            await self._producer.stop()

    async def send(self, trajectory: TrajectoryLike) -> None:
        trajectory = as_trajectory(trajectory)
        await self._send(self.settings.input_topic, trajectory.id,
                         trajectory.model_dump_json(exclude_defaults=True).encode())

    async def _send(self, topic: str, key: str, value: bytes,
                    headers: Sequence[tuple[str, bytes]] = ()) -> None:
        if self._producer is None:
            raise RuntimeError("use TrajectoryProducer as 'async with TrajectoryProducer()'")
        await self._producer.send_and_wait(topic, value, key=key.encode(),
                                           headers=[*_trace_context(), *headers])

    async def send_message(self, message: RunStart | RunStep | RunEnd,
                           headers: Sequence[tuple[str, bytes]] = ()) -> None:
        """One message of a run sent step by step, to the step topic, keyed by its run's
        id (so all of a run's messages reach the same partition, in order)."""
        await self._send(self.settings.step_topic, message.trajectory_id,
                         message.model_dump_json(exclude_defaults=True).encode(), headers)

    async def start_run(self, run_id: str, request: str, task_type: TaskType | None = None,
                        metadata: dict[str, Any] | None = None) -> RunSender:
        """Start sending a run step by step: the gateway judges each step as it arrives
        (a step that flags gets a step verdict at once) and the whole run at its end."""
        start = RunStart(type="start", trajectory_id=run_id, seq=0, request=request,
                         task_type=task_type, metadata=metadata or {})
        await self.send_message(start)
        return RunSender(self, run_id)

    async def send_steps(self, trajectory: TrajectoryLike,
                         headers: Sequence[tuple[str, bytes]] = ()) -> None:
        """A whole trajectory sent step by step, as if it were happening now."""
        for message in run_messages(as_trajectory(trajectory)):
            await self.send_message(message, headers)


class RunSender:
    """One run being sent step by step (from :meth:`TrajectoryProducer.start_run`): a
    ``step`` for each step as it happens, then ``end`` with the response. Each message
    carries the next sequence number, so a message the producer sends twice is judged
    once."""

    def __init__(self, producer: TrajectoryProducer, run_id: str) -> None:
        self.producer = producer
        self.run_id = run_id
        self.seq = 0

    async def step(self, step: Step | Mapping[str, Any]) -> None:
        """A step as in a trajectory's ``steps`` (validated here: ``ValidationError``)."""
        self.seq += 1
        await self.producer.send_message(RunStep(
            type="step", trajectory_id=self.run_id, seq=self.seq,
            step=step if isinstance(step, Step) else Step.model_validate(step)))

    async def end(self, response: str = "") -> None:
        self.seq += 1
        await self.producer.send_message(
            RunEnd(type="end", trajectory_id=self.run_id, seq=self.seq, response=response))


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

    def send(self, trajectory: TrajectoryLike) -> None:
        self._runner.run(self._producer.send(trajectory))

    def send_message(self, message: RunStart | RunStep | RunEnd) -> None:
        """One message of a run sent step by step (see :meth:`TrajectoryProducer.send_message`)."""
        self._runner.run(self._producer.send_message(message))


def _trace_context() -> list[tuple[str, bytes]]:
    try:
        from opentelemetry.propagate import inject
    except ImportError:
        return []
    carrier: dict[str, str] = {}
    inject(carrier)
    return [(name, value.encode()) for name, value in carrier.items()]


async def _consumer(settings: KafkaSettings, topics: Collection[str], fetch_max_wait_ms: int
                    ) -> tuple[AIOKafkaConsumer, list[TopicPartition]]:
    """A started consumer without a group, assigned every partition of ``topics``; the
    caller positions and stops it. A missing topic is :class:`TopicMissing`."""
    consumer = AIOKafkaConsumer(group_id=None, enable_auto_commit=False,
                                fetch_max_wait_ms=fetch_max_wait_ms, **settings.client_args())
    try:
        await reach(settings)
        await consumer.start()
        assigned = []
        for topic in topics:
            partitions = consumer.partitions_for_topic(topic) or set()
            if not partitions:
                await consumer._client.force_metadata_update()
                partitions = consumer.partitions_for_topic(topic) or set()
            if not partitions:
                what, setting = {settings.verdict_topic: ("verdicts", "verdict_topic"),
                                 settings.step_verdict_topic: ("step verdicts",
                                                               "step_verdict_topic"),
                                 settings.dlq_topic: ("dead letters", "dlq_topic")}.get(
                    topic, ("trajectories", "input_topic"))
                raise TopicMissing(f"no topic {topic} on {settings.kafka_bootstrap} to read "
                                   f"{what} from: create it, or set {flag(setting)} or "
                                   f"{ENV_PREFIX}{setting.upper()}")
            assigned += [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(assigned)
    except BaseException:
        await consumer.stop()
        raise
    return consumer, assigned


async def seek_to_end(consumer: AIOKafkaConsumer, partitions: Collection[TopicPartition],
                      timeout: float = 30.0) -> None:
    """Position ``consumer`` at each partition's end now: where the next record written will
    be. The broker's answer to "where is the end" is only where reading starts; the end is
    the high watermark of the fetches from there, which every fetch response carries."""
    await consumer.seek_to_end(*partitions)
    ends: dict[TopicPartition, int] = {}
    deadline = time.monotonic() + timeout
    while len(ends) < len(partitions):
        if time.monotonic() > deadline:
            raise KafkaConnectionError(f"no fetch answered within {timeout:g} s")
        await consumer.getmany(*partitions, timeout_ms=100)  # records before the end: old
        for tp in partitions:
            end = consumer.highwater(tp)
            if end is not None:
                ends[tp] = end
    for tp, end in ends.items():
        consumer.seek(tp, end)


async def verdicts_at_end(settings: KafkaSettings, fetch_max_wait_ms: int = 10,
                          topics: Sequence[str] | None = None) -> AIOKafkaConsumer:
    """A started consumer of the verdict topic (or ``topics``), positioned at its end now
    (no group): every verdict of what is sent after this returns will be read by it. The
    caller stops it."""
    consumer, assigned = await _consumer(settings, topics or [settings.verdict_topic],
                                         fetch_max_wait_ms)
    try:
        await seek_to_end(consumer, assigned)
    except BaseException:
        await consumer.stop()
        raise
    return consumer


async def verdicts(settings: KafkaSettings | None = None, *, from_beginning: bool = False,
                   count: int | None = None, timeout: float | None = None,
                   judging: Iterable[TrajectoryLike] | None = None,
                   dead_letters: bool = False, trajectories: bool = False,
                   ) -> AsyncIterator[Verdict | DeadLetter | Trajectory]:
    """Every verdict from now on (or from the topic's start), until ``count`` were read or
    ``timeout`` seconds passed without a new one, or, given ``judging`` (trajectories), only
    their verdicts (the first of each) until each has one. Reads without a consumer group:
    it commits nothing and takes nothing from others. With ``dead_letters`` and
    ``trajectories``, the dead-letter and input topics' records too (trajectories are what
    a verdict's evidence offsets point into)."""
    settings = settings or KafkaSettings()
    models: dict[str, type[Verdict | DeadLetter | Trajectory]] = {settings.verdict_topic: Verdict}
    if dead_letters:
        models[settings.dlq_topic] = DeadLetter
    if trajectories:
        models[settings.input_topic] = Trajectory
    waiting = None if judging is None else {as_trajectory(t).id for t in judging}
    consumer, assigned = await _consumer(settings, list(models), fetch_max_wait_ms=100)
    try:
        if from_beginning:
            await consumer.seek_to_beginning(*assigned)
        else:
            await seek_to_end(consumer, assigned)
        async for message in _read(consumer, models, count, timeout, waiting):
            yield message
    finally:
        await consumer.stop()


async def _read(consumer: AIOKafkaConsumer, models: Mapping[str, type[M]], count: int | None,
                timeout: float | None, waiting: set[str] | None) -> AsyncIterator[M]:
    """What ``consumer`` reads, as its topic's model, until ``count``, ``timeout`` seconds
    without one, or a verdict for each of ``waiting``; records that are no valid message
    (someone else's on the topic) are skipped."""
    read = 0
    deadline = None if timeout is None else time.monotonic() + timeout
    while (count is None or read < count) and (waiting is None or waiting):
        if deadline is not None and time.monotonic() >= deadline:
            return
        for record in (r for rs in (await consumer.getmany(timeout_ms=200)).values() for r in rs):
            try:
                message = models[record.topic].model_validate_json(record.value or b"")
            except ValidationError:
                continue
            if waiting is not None and isinstance(message, Verdict):
                if message.trajectory_id not in waiting:
                    continue
                waiting.discard(message.trajectory_id)
            read += 1
            if timeout is not None:
                deadline = time.monotonic() + timeout
            yield message
            if (count is not None and read >= count) or waiting == set():
                return


async def judged(trajectories: Iterable[TrajectoryLike], settings: KafkaSettings | None = None,
                 timeout: float = 30.0) -> AsyncIterator[Verdict]:
    """Send ``trajectories`` and yield each one's verdict as it comes (the first, should
    at-least-once delivery bring two), until all have one or ``timeout`` seconds pass
    without a new one."""
    settings = settings or KafkaSettings()
    sending = [as_trajectory(t) for t in trajectories]  # all valid before any is sent
    consumer = await verdicts_at_end(settings, fetch_max_wait_ms=100)
    try:
        async with TrajectoryProducer(settings) as producer:
            for trajectory in sending:
                await producer.send(trajectory)
        async for verdict in _read(consumer, {settings.verdict_topic: Verdict}, None, timeout,
                                   {t.id for t in sending}):
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


async def partitions(consumer: AIOKafkaConsumer, topic: str, bootstrap: str
                     ) -> list[TopicPartition]:
    """Every partition of ``topic``; a missing topic is one line naming it."""
    found = consumer.partitions_for_topic(topic)
    if not found:
        await consumer._client.force_metadata_update()
        found = consumer.partitions_for_topic(topic)
    if not found:
        raise TopicMissing(f"no topic {topic} on {bootstrap}")
    return [TopicPartition(topic, p) for p in sorted(found)]


async def from_start(settings: KafkaSettings, topics: Sequence[str]) -> AIOKafkaConsumer:
    """A started consumer without a group, assigned every partition of ``topics`` at its
    first record. The caller stops it."""
    consumer = AIOKafkaConsumer(group_id=None, enable_auto_commit=False, fetch_max_wait_ms=100,
                                **settings.client_args())
    await consumer.start()
    try:
        assigned = [tp for topic in topics
                    for tp in await partitions(consumer, topic, settings.kafka_bootstrap)]
        consumer.assign(assigned)
        await consumer.seek_to_beginning(*assigned)
    except BaseException:
        await consumer.stop()
        raise
    return consumer


async def read_topic(settings: KafkaSettings, topic: str, model: type[Model],
                     idle: float = 1.0) -> list[Model]:
    """Every record of ``topic`` now that ``model`` reads (read without a group, from the
    start to the high watermark the fetches report, never a single end-offset answer: see
    the module's docstring); a record it cannot read is skipped."""
    consumer = await from_start(settings, [topic])
    assigned = list(consumer.assignment())
    try:
        read: list[Model] = []
        deadline = time.monotonic() + idle
        while time.monotonic() <= deadline:
            batches = await consumer.getmany(timeout_ms=200)
            for record in (r for records in batches.values() for r in records):
                with contextlib.suppress(ValidationError):
                    read.append(model.model_validate_json(record.value or b""))
                deadline = time.monotonic() + idle
            marks = [(tp, consumer.highwater(tp)) for tp in assigned]
            if all([mark is not None and await consumer.position(tp) >= mark
                    for tp, mark in marks]):
                break
        return read
    finally:
        await consumer.stop()


# --- the pre-execution guard -------------------------------------------------------------

GUARD_URL = "http://127.0.0.1:8470"  # `monitor-gateway guard`'s default address
ToolCallLike = ToolCall | Mapping[str, Any]


class GuardUnavailable(ConnectionError):
    """The guard gave no answer: unreachable, slower than the client's timeout, or a
    fault of its own (5xx). What the call does then is the caller's fail policy."""


class GuardRefused(ValueError):
    """The guard refused the request as malformed (4xx); the message is its reason."""


class GuardClient:
    """Asks a guard (``monitor-gateway guard``) whether an agent's proposed tool call may
    run, before it runs::

        guard = GuardClient()
        decision = guard.check_sync({"id": "run-1", "request": "Free disk on staging."},
                                    {"name": "bash", "arguments": {"cmd": "df -h"}})
        if decision.decision == "block":
            ...  # do not run it; decision.verdict has the score and the evidence

    ``run`` is the run so far: a Trajectory's fields, its ``response`` and ``steps``
    possibly empty. ``check`` is the same for async code (one connection pool, closed by
    :meth:`aclose`); ``check_sync`` opens a connection a call, for code without an event
    loop (a callback on the agent's thread). Both raise :class:`GuardUnavailable` when the
    guard does not answer within ``timeout`` seconds, :class:`GuardRefused` when it
    refuses the request, and ``pydantic.ValidationError`` for a call that is no
    ToolCall."""

    def __init__(self, url: str = GUARD_URL, timeout: float = 1.0) -> None:
        self.url = url.rstrip("/") + "/check"
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    async def check(self, run: TrajectoryLike, call: ToolCallLike) -> GuardDecision:
        body = _guard_body(run, call)
        if self._session is None:  # made here: a session binds to the running loop
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout))
        try:
            async with self._session.post(self.url, data=body, headers=_JSON) as response:
                return _guard_answer(response.status, await response.read(), self.url)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise GuardUnavailable(f"no answer from the guard at {self.url}: "
                                   f"{type(exc).__name__}: {exc}") from exc

    def check_sync(self, run: TrajectoryLike, call: ToolCallLike) -> GuardDecision:
        request = urllib.request.Request(self.url, data=_guard_body(run, call),
                                         headers=_JSON, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return _guard_answer(response.status, response.read(), self.url)
        except urllib.error.HTTPError as exc:
            return _guard_answer(exc.code, exc.read(), self.url)
        except OSError as exc:  # URLError, a timeout, a refused or reset connection
            raise GuardUnavailable(f"no answer from the guard at {self.url}: "
                                   f"{type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


_JSON = {"Content-Type": "application/json"}


def _guard_body(run: TrajectoryLike, call: ToolCallLike) -> bytes:
    so_far = (run.model_dump(mode="json", exclude_defaults=True) if isinstance(run, Trajectory)
              else dict(run))
    proposed = call if isinstance(call, ToolCall) else ToolCall.model_validate(call)
    return json.dumps({"trajectory": so_far, "call": proposed.model_dump(mode="json")},
                      ensure_ascii=False, default=str).encode()


def _guard_answer(status: int, body: bytes, url: str) -> GuardDecision:
    if status == 200:
        return GuardDecision.model_validate_json(body)
    if 400 <= status < 500:
        try:
            reason = json.loads(body)["detail"]
        except (ValueError, KeyError, TypeError):
            reason = body[:200].decode("utf-8", "replace")
        raise GuardRefused(f"the guard at {url} refused the request ({status}): {reason}")
    raise GuardUnavailable(f"the guard at {url} answered {status}")
