"""Stream labelled samples through a running gateway and collect its verdicts.

The harness is an ordinary Kafka client of the gateway (plain aiokafka, no group), so a
replay takes the same path as production traffic. Labels travel only in headers.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord

from monitor_gateway.client import verdicts_at_end
from monitor_gateway.ingest import REPLAY_CATEGORY, REPLAY_LABEL, REPLAY_PAIR, REPLAY_RUN
from monitor_gateway.schema import StepVerdict, Trajectory, Verdict, run_messages
from monitor_gateway.settings import KafkaSettings

from .dataset import Sample

# seconds step verdicts are still read after the last final verdict arrived
STEP_DRAIN = 1.0


@dataclass(frozen=True, slots=True)
class Result:
    sample: Sample
    verdict: Verdict
    latency_s: float
    # sent step by step (``replay --steps``): the first step that flagged, if any
    flagged_step: int | None = None


def pair_order(samples: Sequence[Sample], seed: int | None = None) -> list[Sample]:
    """Pairs in file order, the two samples of each pair in random order; an unpaired
    sample stands alone where it is."""
    rng = random.Random(seed)
    pairs: dict[str, list[Sample]] = {}
    for sample in samples:
        pairs.setdefault(sample.pair_id or f"\0{sample.id}", []).append(sample)
    ordered: list[Sample] = []
    for members in pairs.values():
        rng.shuffle(members)
        ordered.extend(members)
    return ordered


class Replay:
    """One replay run: open the verdict topic at its end, send, then wait for verdicts.
    A canary (``verdicts=False``) only sends: its figures are the gateway's live metrics.
    Unlabelled (``labelled=False``, ``replay --as-production``), it sends no replay
    headers: the gateway and the review loop take it for production traffic. With a
    ``pace`` (``replay --steps``), each sample goes to the step topic as a run happening
    now, and the step verdicts are read beside the final ones."""

    def __init__(self, settings: KafkaSettings, run_id: str, verdicts: bool = True,
                 labelled: bool = True, pace: float | None = None) -> None:
        self.settings = settings
        self.run_id = run_id
        self._verdicts = verdicts
        self._labelled = labelled  # False: sent as production traffic, without headers
        # sent step by step (``replay --steps``): seconds between a run's messages
        self.pace = pace
        self.sent_at: dict[str, float] = {}
        self.results: dict[str, Result] = {}
        self.flagged_steps: dict[str, int] = {}  # a run's first step that flagged
        self._samples: dict[str, Sample] = {}
        self._sent_all = asyncio.Event()
        self._consumer: AIOKafkaConsumer | None = None
        self._producer = AIOKafkaProducer(acks="all", linger_ms=5, **settings.client_args())

    async def __aenter__(self) -> Replay:
        await self._producer.start()
        if self._verdicts:
            # a short fetch wait: the replay measures send-to-verdict latency, and a broker
            # that does not answer a waiting fetch when data arrives (the embedded one)
            # would add up to fetch.max.wait (500 ms by default) to every figure
            topics = [self.settings.verdict_topic]
            if self.pace is not None:
                topics.append(self.settings.step_verdict_topic)
            self._consumer = await verdicts_at_end(self.settings, fetch_max_wait_ms=10,
                                                   topics=topics)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._producer.stop()
        if self._consumer is not None:
            await self._consumer.stop()

    async def send(self, samples: Sequence[Sample], rate: float | None = None,
                   on_sent: Callable[[], None] = lambda: None) -> None:
        """Produce every sample with its replay headers, at ``rate`` per second or at once."""
        started = time.monotonic()
        pending = []
        for i, sample in enumerate(samples):
            if rate:
                await asyncio.sleep(max(0.0, started + i / rate - time.monotonic()))
            self._samples[sample.id] = sample
            headers = [
                (REPLAY_RUN, self.run_id.encode()),
                (REPLAY_LABEL, sample.label.encode()),
                (REPLAY_CATEGORY, sample.category.encode()),
            ] if self._labelled else []
            if sample.pair_id is not None and self._labelled:
                headers.append((REPLAY_PAIR, sample.pair_id.encode()))
            self.sent_at[sample.id] = time.monotonic()
            if self.pace is not None:
                pending.append(asyncio.ensure_future(self._stream(sample, headers, on_sent)))
                continue
            future = await self._producer.send(
                self.settings.input_topic, json.dumps(sample.trajectory()).encode(),
                key=sample.id.encode(), headers=headers,
            )
            future.add_done_callback(lambda _: on_sent())
            pending.append(future)
        await asyncio.gather(*pending)
        self._sent_all.set()

    async def _stream(self, sample: Sample, headers: list[tuple[str, bytes]],
                      on_sent: Callable[[], None]) -> None:
        """One sample as a run happening now: its start, each step and its end, ``pace``
        seconds apart, each with the replay headers. Send-to-verdict latency is counted
        from its end."""
        assert self.pace is not None
        messages = run_messages(Trajectory.model_validate(sample.trajectory()))
        for i, message in enumerate(messages):
            if i:
                await asyncio.sleep(self.pace)
            if i == len(messages) - 1:
                self.sent_at[sample.id] = time.monotonic()
            await self._producer.send_and_wait(
                self.settings.step_topic, message.model_dump_json(exclude_defaults=True).encode(),
                key=sample.id.encode(), headers=headers)
        on_sent()

    async def collect(self, timeout: float, on_verdict: Callable[[], None] = lambda: None) -> None:
        """Read verdicts of this run, while it is sent and after, until every sample has one
        or ``timeout`` passes without a new verdict. Duplicates (at-least-once delivery)
        keep the first verdict."""
        deadline: float | None = None
        while True:
            if self._sent_all.is_set():
                if len(self.results) == len(self.sent_at):
                    if self.pace is not None:  # a step verdict acknowledged after its end's
                        await self._drain(STEP_DRAIN)
                    break
                deadline = deadline or time.monotonic() + timeout
                if time.monotonic() > deadline:
                    break
            now = time.monotonic()
            for record in await self._fetch():
                verdict = Verdict.model_validate_json(record.value)
                sample = self._samples.get(verdict.trajectory_id)
                if sample is None or sample.id in self.results:
                    continue
                self.results[sample.id] = Result(sample, verdict, now - self.sent_at[sample.id])
                if deadline is not None:  # sending is over: wait `timeout` for the next
                    deadline = now + timeout
                on_verdict()

    async def _fetch(self) -> list[ConsumerRecord[bytes, bytes]]:
        """This run's verdicts fetched now; its step verdicts noted on the way."""
        assert self._consumer is not None, "a canary collects no verdicts"
        batches = await self._consumer.getmany(timeout_ms=200)
        verdicts = []
        for record in (r for records in batches.values() for r in records):
            if dict(record.headers).get(REPLAY_RUN) != self.run_id.encode():
                continue
            if record.topic != self.settings.step_verdict_topic:
                verdicts.append(record)
                continue
            step = StepVerdict.model_validate_json(record.value)
            first = self.flagged_steps.get(step.trajectory_id, step.step)
            self.flagged_steps[step.trajectory_id] = min(first, step.step)
        return verdicts

    async def _drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await self._fetch()

    def stepped(self) -> list[Result]:
        """The results, each with the first step of its run that flagged."""
        return [replace(r, flagged_step=self.flagged_steps.get(r.sample.id))
                for r in self.results.values()]

    @property
    def missing(self) -> list[str]:
        return [sample_id for sample_id in self.sent_at if sample_id not in self.results]
