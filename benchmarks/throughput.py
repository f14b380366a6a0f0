"""Gateway throughput against baselines measured in the same run, on the same broker.

1. Instant monitor (pure computation, judged inline like rules and the classifier). Two
   plain aiokafka consume-and-produce loops (getmany, produce each record, wait for the
   acks, commit) are the baselines:
   - "same work": each record is validated, judged by the same monitor, and its verdict
     built and serialised with the same pure functions the gateway uses. The ratio to
     this loop is the cost of the gateway's machinery (FastStream, tasks, offset
     tracking, metrics): target >= 0.80.
   - "forward only": the record is copied to the output topic untouched: the ceiling of
     the Kafka client itself, shown for reference.
   An asynchronous monitor that answers at once (a task a record) is shown for reference.
2. A monitor that sleeps 200 ms at CONCURRENCY=64 vs the ideal 64 / 0.2 s = 320/s
   (target >= 0.90).

Throughput comes from the output records' timestamps (first to last), so the consumer-
group join (about 5 s on the embedded broker) is counted for no side; beside it, the CPU
this process spends a record over the same stretch. Each figure is the median of
``--rounds`` alternating runs: the machines are shared and noisy.

    python benchmarks/throughput.py [--bootstrap HOST:PORT] [--n 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import uvloop
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from monitor_gateway.embedded import EmbeddedBroker, create_topics
from monitor_gateway.evidence import ground
from monitor_gateway.gateway import Gateway, tune_gc
from monitor_gateway.ingest import parse_trajectory
from monitor_gateway.monitors import Judgement, Monitor
from monitor_gateway.monitors.base import InlineMonitor
from monitor_gateway.policy import Policy
from monitor_gateway.schema import MonitorCard, Trajectory, utcnow
from monitor_gateway.settings import GatewaySettings
from monitor_gateway.verdict import build_verdict

PARTITIONS = 4
BOOTSTRAP = ""


class SleepMonitor:
    """An asynchronous monitor, like an LLM call: the gateway gives each call a task."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.card = MonitorCard(name="sleep", backend="sleep", version="1",
                                label=f"benchmark monitor sleeping {seconds}s")

    async def judge(self, trajectory: Trajectory) -> Judgement:
        await asyncio.sleep(self.seconds)
        return Judgement(score=0.0)


class InstantMonitor:
    """Returns at once, as pure computation (like rules or the classifier): the gateway
    judges it inline on the fetch loop."""

    card = MonitorCard(name="instant", backend="instant", version="1", label="instant")

    def judge_now(self, trajectory: Trajectory) -> Judgement:
        return Judgement(score=0.0)

    async def judge(self, trajectory: Trajectory) -> Judgement:
        return self.judge_now(trajectory)


def fresh(bootstrap: str, concurrency: int) -> GatewaySettings:
    run = uuid.uuid4().hex[:8]
    return GatewaySettings(kafka_bootstrap=bootstrap, input_topic=f"bench-in-{run}",
                           verdict_topic=f"bench-out-{run}", dlq_topic=f"bench-dlq-{run}",
                           group_id=f"bench-{run}", metrics_port=0, concurrency=concurrency)


async def fill(settings: GatewaySettings, n: int) -> None:
    await create_topics(settings, {settings.input_topic: PARTITIONS,
                                   settings.verdict_topic: PARTITIONS, settings.dlq_topic: 1})
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, linger_ms=20,
                                max_batch_size=256 * 1024)
    await producer.start()
    steps = [{"role": "assistant", "content": "Running the tests.",
              "tool_calls": [{"name": "bash", "arguments": {"cmd": "pytest -q"}}]},
             {"role": "tool", "content": "12 passed"}]
    futures = []
    for i in range(n):
        body = {"id": f"b{i}", "request": "Fix the flaky test in the payments service.",
                "response": "def fee(x):\n    return round(x * 0.029 + 0.30, 2)\n" * 4,
                "steps": steps, "task_type": "code", "metadata": {"agent": "bench"}}
        futures.append(await producer.send(settings.input_topic, json.dumps(body).encode(),
                                           key=f"b{i}".encode()))
    await asyncio.gather(*futures)
    await producer.stop()


class Measured(NamedTuple):
    rate: float  # records a second, from the output records' broker timestamps
    cpu: float  # this process's CPU microseconds a record while the outputs arrive: steadier
    # than the rate when the machine is shared, and what bounds a single-threaded process
    around: tuple[Any, Any] | None = None  # what ``sample`` read at the first output and the
    # last, when ``outputs`` was given one


class Outputs(NamedTuple):
    stamps: list[int]  # the broker timestamps (ms) of the output records, sorted
    cpu: float  # as in Measured
    around: tuple[Any, Any] | None = None  # as in Measured

    def measured(self) -> Measured:
        return Measured(per_second(self.stamps), self.cpu, self.around)


def per_second(stamps: list[int]) -> float:
    return (len(stamps) - 1) / ((max(stamps) - min(stamps)) / 1000)


async def outputs(settings: GatewaySettings, n: int, timeout: float = 300,
                  sample: Callable[[], Any] | None = None) -> Outputs:
    """The first ``n`` records on the output topic, read by this process. The CPU it spends
    (on the contender and on this reading alike) is counted from the first output to the
    last, so start-up and the group join are counted for no side; ``sample`` (e.g. every
    process's CPU) is read at the same two moments."""
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, group_id=None,
                                auto_offset_reset="earliest", fetch_max_bytes=16 * 1024 * 1024)
    await consumer.start()
    consumer.assign([TopicPartition(settings.verdict_topic, p) for p in range(PARTITIONS)])
    stamps: list[int] = []
    first = (0, 0.0)  # records read, and CPU seconds, when the first outputs came
    sampled: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(stamps) < n and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                stamps.extend(r.timestamp for r in records)
            if stamps and not first[0]:
                first = (len(stamps), time.process_time())
                if sample is not None:
                    sampled.append(sample())
        cpu = (time.process_time() - first[1]) / max(1, len(stamps) - first[0]) * 1e6
        if sample is not None:
            sampled.append(sample())
    finally:
        await consumer.stop()
    if len(stamps) < n:
        raise RuntimeError(f"only {len(stamps)} of {n} outputs arrived")
    return Outputs(sorted(stamps), cpu, (sampled[0], sampled[1]) if sample else None)


def verdict_bytes(value: bytes, monitor: InlineMonitor, policy: Policy, max_bytes: int
                  ) -> bytes:
    """The same-work loop's work on a record: validate it, judge it, build and serialise
    its verdict, with the gateway's own pure functions."""
    received, started = utcnow(), time.perf_counter()
    trajectory = parse_trajectory(value, max_bytes)
    assert isinstance(trajectory, Trajectory)
    judgement = monitor.judge_now(trajectory)
    verdict = build_verdict(
        trajectory, judgement, ground(trajectory, judgement.quotes), card=monitor.card,
        policy=policy, tag=None, received_at=received, monitor_seconds=0.0,
        gateway_seconds=time.perf_counter() - started)
    return verdict.model_dump_json().encode()


async def plain_loop(settings: GatewaySettings, n: int, same_work: bool) -> Measured:
    """A baseline: aiokafka consume, produce each record, commit after each batch."""
    monitor = InstantMonitor()
    policy = Policy(settings.threshold, fail_policy=settings.fail_policy)
    consumer = AIOKafkaConsumer(settings.input_topic, bootstrap_servers=settings.kafka_bootstrap,
                                group_id=settings.group_id, enable_auto_commit=False,
                                auto_offset_reset="earliest")
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all")
    await consumer.start()
    await producer.start()

    async def loop() -> None:
        done = 0
        while done < n:
            batch = await consumer.getmany(timeout_ms=500, max_records=500)
            futures = []
            for record in (r for records in batch.values() for r in records):
                value = verdict_bytes(record.value, monitor, policy,
                                      settings.max_message_bytes) if same_work else record.value
                futures.append(await producer.send(settings.verdict_topic, value,
                                                   key=record.key))
            await asyncio.gather(*futures)
            if futures:
                await consumer.commit()
            done += len(futures)

    try:
        worker = asyncio.create_task(loop())
        measured = (await outputs(settings, n)).measured()
        await worker
        return measured
    finally:
        await producer.stop()
        await consumer.stop()


async def gateway(settings: GatewaySettings, n: int, monitor: Monitor,
                  sample: Callable[[], Any] | None = None) -> Measured:
    gw = Gateway(settings, monitor)
    await gw.start()
    try:
        return (await outputs(settings, n, sample=sample)).measured()
    finally:
        await gw.stop()


async def rates(n: int, rounds: int,
                runs: dict[str, Callable[[GatewaySettings], Awaitable[Measured]]],
                filler: Callable[[GatewaySettings, int], Awaitable[None]] = fill
                ) -> dict[str, Measured]:
    """Each contender once a round, the order rotating from round to round, so drift on a
    shared machine hits all alike; the median of the rounds for each. ``filler`` writes
    the ``n`` input records."""
    measured: dict[str, list[Measured]] = {name: [] for name in runs}
    names = list(runs)
    for round_ in range(rounds):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            run = runs[name]
            settings = fresh(BOOTSTRAP, 64)
            await filler(settings, n)
            measured[name].append(await run(settings))
    medians = {name: Measured(statistics.median(m.rate for m in values),
                              statistics.median(m.cpu for m in values))
               for name, values in measured.items()}
    for name, values in measured.items():
        print(f"  {name:<40} {medians[name].rate:8.1f} records/s, "
              f"{medians[name].cpu:6.1f} CPU us a record  "
              f"(runs: {', '.join(f'{m.rate:.0f}' for m in values)})")
    return medians


def ratio(contender: Measured, baseline: Measured) -> str:
    """The ratio of the rates, and the ratio of CPU a record (the baseline's over the
    contender's): what the rates' ratio would be were both bound by this process's CPU. The
    second moves less with the machine's other load."""
    return (f"{contender.rate / baseline.rate:.2f} "
            f"(from CPU a record: {baseline.cpu / contender.cpu:.2f})")


async def main(n: int, slow_n: int, rounds: int) -> None:
    tune_gc()  # what `serve` does, for every contender alike
    print(f"instant monitor, {n} trajectories, {PARTITIONS} partitions, median of {rounds}")
    fast = await rates(n, rounds, {
        "plain aiokafka loop, forward only": lambda s: plain_loop(s, n, same_work=False),
        "plain aiokafka loop, same work": lambda s: plain_loop(s, n, same_work=True),
        "gateway, instant monitor": lambda s: gateway(s, n, InstantMonitor()),
        "gateway, async monitor answering at once": lambda s: gateway(s, n, SleepMonitor(0)),
    })
    gw = fast["gateway, instant monitor"]
    same = fast["plain aiokafka loop, same work"]
    print(f"  ratio gateway / same-work loop:    {ratio(gw, same)} (target >= 0.80)")
    print(f"  ratio gateway / forward-only loop: "
          f"{ratio(gw, fast['plain aiokafka loop, forward only'])} (reference)")
    tasks = fast["gateway, async monitor answering at once"]
    print(f"  ratio async-monitor gateway / same-work loop: {ratio(tasks, same)}"
          " (reference: a task a record)")

    print(f"\nmonitor sleeping 200 ms, {slow_n} trajectories, {PARTITIONS} partitions")
    slow = await rates(slow_n, 1, {
        "gateway, adaptive limit (ceiling 64)": lambda s: gateway(s, slow_n, SleepMonitor(0.2)),
        "gateway, fixed limit 64": lambda s: gateway(
            s.model_copy(update={"adaptive_concurrency": False}), slow_n, SleepMonitor(0.2))})
    for name, measured in slow.items():
        print(f"  {name}: ratio to 64 / 0.2 s = 320/s: {measured.rate / 320:.2f}"
              " (target >= 0.90)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap")
    parser.add_argument("--n", type=int, default=40000)
    parser.add_argument("--slow-n", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        BOOTSTRAP = args.bootstrap or stack.enter_context(EmbeddedBroker()).bootstrap
        uvloop.run(main(args.n, args.slow_n, args.rounds))
