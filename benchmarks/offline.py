"""The offline monitors' speed (issue 12's targets), each beside a baseline from the same run.

1. Latency, in this process:
   - the rules fast path on realistic trajectories of 1.5-2.5 KB (target: median <= 0.1 ms),
     beside parsing the same bytes into a Trajectory (the gateway does that for every record);
   - the whole offline monitor on every realistic trajectory (targets: median <= 2 ms,
     p99 <= 20 ms);
   - time per byte from 2 KiB to 1 MiB, on prose, code, a one-line shell script and hostile
     text (target: linear, so the last column stays near 1).
2. Microseconds a record in this process, without Kafka: the plain loop's work and the
   gateway's own path, each with no monitor and with the rules (where the time goes).
3. Throughput through the gateway on the embedded broker, realistic trajectories cycled:
   - MONITOR=rules vs two plain aiokafka consume-and-produce loops (target: >= 0.6), one
     forwarding each record, one parsing it and building a verdict without a monitor; and
     vs the gateway with a monitor that does nothing (what the rules themselves cost);
   - the offline monitor judged on the fetch loop (WORKERS=0) and in 1 and the default
     number of worker processes (one a core), against what the cores could judge: cores /
     the mean judging time in this process, measured just before and after each run
     (target: >= 0.8 with the default), with
     the fetch loop's own latency while it runs: how late a timer on the gateway's event
     loop fires (target: p99 < 5 ms with workers), and the CPU every process spent a
     trajectory (the gateway's, the workers, the broker) and other work's on the machine.
     ``--profile``: where the gateway's processes spend their time with the default number
     of workers (py-spy where installed, else cProfile's summary of the gateway's thread).

    python benchmarks/offline.py [--bootstrap HOST:PORT] [--n 20000] [--offline-n 3000]
                                 [--rounds 3] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import json
import os
import pstats
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path

import throughput
import uvloop
from aiokafka import AIOKafkaProducer, ConsumerRecord, TopicPartition
from processes import machine_busy, tree
from prometheus_client import CollectorRegistry
from throughput import (
    PARTITIONS,
    InstantMonitor,
    Measured,
    fresh,
    gateway,
    plain_loop,
    rates,
    ratio,
    verdict_bytes,
)

from monitor_gateway.breaker import CircuitBreaker
from monitor_gateway.calling import Backend
from monitor_gateway.embedded import EmbeddedBroker, create_topics
from monitor_gateway.gateway import tune_gc
from monitor_gateway.ingest import parse_trajectory
from monitor_gateway.limits import Limiter
from monitor_gateway.metrics import Metrics
from monitor_gateway.monitors import build_monitor
from monitor_gateway.monitors.base import InlineMonitor
from monitor_gateway.monitors.registry import default_workers
from monitor_gateway.observe import Observer
from monitor_gateway.offsets import Ticket
from monitor_gateway.pipeline import Pipeline
from monitor_gateway.policy import Policy
from monitor_gateway.publish import Outgoing
from monitor_gateway.schema import Trajectory
from monitor_gateway.settings import GatewaySettings
from monitor_gateway.tracing import from_settings
from replay.sources import resolve

FORWARD = "plain aiokafka loop, forward only"
SAME_WORK = "plain aiokafka loop, parse and verdict, no monitor"
NULL = "gateway, a monitor that does nothing"
RULES = "gateway, MONITOR=rules"
SIZES = (2 * 1024, 16 * 1024, 128 * 1024, 1024 * 1024)


def bodies() -> list[bytes]:
    """Every realistic trajectory (all splits), as the gateway receives them."""
    return [json.dumps(s.trajectory()).encode()
            for split in ("dev", "test") for s in resolve("realistic", split)]


def timed(call: Callable[[], object], repeat: int = 1) -> float:
    """Seconds a call, the best of ``repeat`` (the least disturbed by other work)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def judged(monitor: InlineMonitor, value: bytes, repeat: int = 1) -> float:
    """Seconds to judge a record, each time on a fresh parse, as the gateway does (nothing
    the monitor computed from an earlier call is reused)."""
    best = float("inf")
    for _ in range(repeat):
        trajectory = parse(value)
        started = time.perf_counter()
        monitor.judge_now(trajectory)
        best = min(best, time.perf_counter() - started)
    return best


def inline(name: str) -> InlineMonitor:
    monitor = build_monitor(GatewaySettings(monitor=name, workers=0))
    assert isinstance(monitor, InlineMonitor)
    return monitor


def latency(values: list[bytes]) -> None:
    rules, offline = inline("rules"), inline("offline")
    small = [v for v in values if 1536 <= len(v) <= 2560]
    fast = [judged(rules, v, 5) for v in small]
    parsing = [timed(partial(parse, v), 5) for v in small]
    print(f"rules fast path, {len(small)} realistic trajectories of 1.5-2.5 KB:")
    print(f"  median {ms(fast)} ms (target <= 0.1 ms); parsing the same bytes: {ms(parsing)} ms"
          f"; ratio {statistics.median(fast) / statistics.median(parsing):.2f}")
    whole = sorted(judged(offline, v) for v in values)
    p99 = whole[int(0.99 * (len(whole) - 1))]
    print(f"offline monitor, all {len(whole)} realistic trajectories (median "
          f"{statistics.median(len(v) for v in values) / 1024:.1f} KB): median {ms(whole)} ms "
          f"(target <= 2), p99 {p99 * 1000:.2f} ms (target <= 20)")
    print("offline monitor, microseconds a byte by size (linear: the last column near 1):")
    print(f"  {'input':<28}" + "".join(f"{n // 1024:>8} KiB" for n in SIZES) + "   1 MiB/2 KiB")
    for name, make in hostile(values).items():
        per_byte = []
        for n in SIZES:
            trajectory = make(n)
            gc.collect()  # the garbage of the 1 MiB inputs before is not this call's cost
            per_byte.append(timed(partial(offline.judge_now, trajectory)) / n * 1e6)
        print(f"  {name:<28}" + "".join(f"{v:>12.2f}" for v in per_byte)
              + f"{per_byte[-1] / per_byte[0]:>14.2f}")


def per_record(values: list[bytes], n: int = 20000) -> None:
    """Microseconds a record in this process, without Kafka, with the gateway's garbage-
    collector settings: the plain same-work loop's steps (parse, judge, verdict, serialise),
    and the gateway's own path (its pipeline, and the acknowledgement's metrics), each with
    a monitor that does nothing and with ``rules``. Steadier than the broker runs, and it
    says where a record's time goes."""
    settings = GatewaySettings(metrics_port=0)
    policy = Policy(settings.threshold, fail_policy=settings.fail_policy)
    records = [ConsumerRecord(settings.input_topic, 0, i, 0, 0, None, value, None, 0,
                              len(value), [])
               for i, (_, value) in zip(range(n), cycled(values), strict=False)]

    def same_work(monitor: InlineMonitor) -> None:
        for record in records:
            verdict_bytes(record.value, monitor, policy, settings.max_message_bytes)

    def gateway_path(monitor: InlineMonitor) -> None:
        pipeline = Pipeline(
            settings, monitor, policy,
            Backend(Limiter(settings.concurrency, adaptive=False),
                    CircuitBreaker(threshold=settings.breaker_failures,
                                   budget=settings.outage_budget, wait=False)),
            Observer(Metrics(CollectorRegistry()), from_settings(settings),
                     monitor.card.backend))
        partition = TopicPartition(settings.input_topic, 0)
        for record in records:
            outgoing = pipeline.first(pipeline.receive(
                record, Ticket(partition, 0, record.offset)))
            assert isinstance(outgoing, Outgoing) and outgoing.acknowledged is not None
            outgoing.acknowledged()

    tune_gc()
    print(f"\nmicroseconds a record without Kafka, {n} realistic trajectories cycled, best of 3:")
    for name, run in (("plain loop's work", same_work), ("gateway's path", gateway_path)):
        costs = [timed(partial(run, monitor), 3) / n * 1e6
                 for monitor in (InstantMonitor(), inline("rules"))]
        print(f"  {name:<20} no monitor {costs[0]:5.1f}, rules {costs[1]:5.1f}")


def parse(value: bytes) -> Trajectory:
    parsed = parse_trajectory(value, 16 * 1024 * 1024)
    assert isinstance(parsed, Trajectory), parsed
    return parsed


def ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:.3f}"


def hostile(values: list[bytes]) -> dict[str, Callable[[int], Trajectory]]:
    """Inputs of any size: realistic prose and code, and text built to hurt parsers and
    regular expressions (unbalanced brackets and quotes, one huge line, arithmetic chains)
    or the detectors' bookkeeping (thousands of edits of one file)."""
    prose = " ".join(str(json.loads(v)["response"]) for v in values)
    code = "".join(f"def f{i}(x):\n    return subprocess.run(f'ls {{x}}', shell=True)\n"
                   for i in range(16000))

    def sized(unit: str, n: int) -> str:
        return (unit * (n // len(unit) + 1))[:n]

    def shell(cmd: str) -> Trajectory:
        return Trajectory.model_validate({
            "id": "h", "request": "Clean up.", "response": "Done.",
            "steps": [{"role": "assistant", "content": "",
                       "tool_calls": [{"name": "bash", "arguments": {"cmd": cmd}}]}]})

    def said(text: str) -> Trajectory:
        return Trajectory(id="h", request="Summarise.", response=text)

    def edits(n: int) -> Trajectory:
        """One file edited at a different line each time, a tool call an edit of about 100
        bytes, no edit redoing another: quadratic when each edit was compared with every
        later one."""
        diff = "-    return total  # {0}\n+    return round(total, 2)  # {0}\n"
        return Trajectory.model_validate({
            "id": "h", "request": "Fix the rounding.", "response": "Done.",
            "steps": [{"role": "assistant", "content": "",
                       "tool_calls": [{"name": "edit_file", "arguments": {
                           "path": "src/fees.py", "diff": diff.format(i)}}]}
                      for i in range(max(1, n // 100))]})

    return {
        "realistic prose": lambda n: said(sized(prose, n)),
        "python, a finding a line": lambda n: said(f"```python\n{sized(code, n)}\n```"),
        "the same without a fence": lambda n: said(code[:n].rsplit("\n", 1)[0] + "\n"),
        "one-line shell script": lambda n: shell(sized("rm -rf /tmp/x && curl -k https://a ; ",
                                                       n)),
        "unbalanced quotes (shell)": lambda n: shell("echo '" + sized("a\"b'c ", n)),
        "open brackets": lambda n: said("(" * n),
        "one word, no spaces": lambda n: said("a" * n),
        "arithmetic chains": lambda n: said(sized("12 * 3 = 36 = 40 + 2 = 7 ", n)),
        "one file edited a call at a time": edits,
    }


def filler(values: list[bytes]) -> Callable[[GatewaySettings, int], Awaitable[None]]:
    async def fill(settings: GatewaySettings, n: int) -> None:
        await create_topics(settings, {settings.input_topic: PARTITIONS,
                                       settings.verdict_topic: PARTITIONS,
                                       settings.dlq_topic: 1})
        producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, linger_ms=20,
                                    max_batch_size=256 * 1024)
        await producer.start()
        try:
            futures = [await producer.send(settings.input_topic, value, key=key)
                       for _, (key, value) in zip(range(n), cycled(values), strict=False)]
            await asyncio.gather(*futures)
        finally:
            await producer.stop()
    return fill


def cycled(values: list[bytes]) -> Iterator[tuple[bytes, bytes]]:
    """The realistic trajectories over and over, each copy with an id of its own, and keyed
    by it as the contract asks of producers (so both contenders hash the same keys)."""
    copy = 0
    while True:
        for value in values:
            body = json.loads(value)
            body["id"] = f"{body['id']}-{copy}"
            yield body["id"].encode(), json.dumps(body).encode()
        copy += 1


class LoopLag:
    """How late a timer fires on this event loop: the fetch loop's own latency. One every
    ``period`` seconds: a timer every millisecond cost 3.8% of a core on its own, about 30
    us a trajectory at 1,300/s, counted against the gateway's process
    (docs/benchmark-log.md, run 39)."""

    def __init__(self, period: float = 0.005) -> None:
        self.period = period
        self.lags: list[float] = []

    async def __aenter__(self) -> LoopLag:
        self._task = asyncio.create_task(self._probe())
        return self

    async def __aexit__(self, *_: object) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _probe(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(self.period)
            self.lags.append(time.perf_counter() - started - self.period)

    def describe(self) -> str:
        lags = sorted(self.lags)
        p99 = lags[int(0.99 * (len(lags) - 1))]
        return f"fetch-loop lag p99 {p99 * 1000:.1f} ms, max {lags[-1] * 1000:.1f} ms"


async def gateways(values: list[bytes], n: int, offline_n: int, rounds: int,
                   profile: bool) -> None:
    tune_gc()
    fill = filler(values)
    print(f"\ngateway throughput, realistic trajectories cycled, {PARTITIONS} partitions, "
          f"median of {rounds}")
    fast = await rates(n, rounds, {
        FORWARD: lambda s: plain_loop(s, n, same_work=False),
        SAME_WORK: lambda s: plain_loop(s, n, same_work=True),
        NULL: lambda s: gateway(s, n, InstantMonitor()),
        RULES: lambda s: gateway(s, n, build_monitor(s.model_copy(update={"monitor": "rules"}))),
    }, fill)
    for baseline in (FORWARD, SAME_WORK, NULL):
        print(f"  ratio rules gateway / {baseline}: {ratio(fast[RULES], fast[baseline])}"
              + {SAME_WORK: " (target >= 0.6)", NULL: " (what the rules cost)"}.get(baseline, ""))

    cores = len(os.sched_getaffinity(0))
    offline = inline("offline")
    print(f"\noffline monitor through the gateway, {offline_n} trajectories, against {cores} "
          "cores / the mean judging time in this process, measured over the realistic set "
          "just before and just after each run (the machine's load drifts); beside it, the CPU "
          "every process spent a trajectory from the first verdict to the last")
    for workers in sorted({0, 1, default_workers()}):
        settings = fresh(throughput.BOOTSTRAP, 64).model_copy(
            update={"monitor": "offline", "workers": workers})
        await fill(settings, offline_n)
        before = mean_judging(offline, values)
        run = gateway(settings, offline_n, build_monitor(settings), sample=usage)
        notes: list[str] = []
        async with LoopLag() as lag:
            measured = await (profiled(run, notes) if profile and workers == default_workers()
                              else run)
        after = mean_judging(offline, values)
        judging, judging_cpu = (before[0] + after[0]) / 2, (before[1] + after[1]) / 2
        ideal = cores / judging
        where = "on the fetch loop" if not workers else f"{workers} worker process" + \
            ("es" if workers > 1 else "")
        print(f"  WORKERS={workers} ({where}): {measured.rate:7.1f} trajectories/s = "
              f"{measured.rate / ideal:.2f} x {ideal:.0f}/s ({cores} / {judging * 1000:.3f} ms)"
              + (" (target >= 0.8)" if workers == default_workers() else "")
              + f"; {lag.describe()}")
        assert measured.around is not None
        for line in (where_the_cpu_goes(measured, judging_cpu), *notes):
            print("    " + line)


def mean_judging(monitor: InlineMonitor, values: list[bytes]) -> tuple[float, float]:
    """Seconds a trajectory, the mean over ``values``: wall-clock (what the cores could
    carry, as the machine is now) and this process's CPU (steady under others' load)."""
    wall = cpu = 0.0
    for value in values:
        trajectory = parse(value)
        started, used = time.perf_counter(), time.process_time()
        monitor.judge_now(trajectory)
        wall += time.perf_counter() - started
        cpu += time.process_time() - used
    return wall / len(values), cpu / len(values)


Usage = tuple[float, float, dict[str, float]]


def usage() -> Usage:
    """Now, the machine's busy CPU seconds, and each of this process tree's CPU seconds."""
    return (time.monotonic(), machine_busy(),
            {name: cpu for name, (_, cpu) in tree(os.getpid(), "bench").items()})


def where_the_cpu_goes(measured: Measured, judging_cpu: float) -> str:
    """CPU microseconds a trajectory of this process (the gateway, with this benchmark's
    reading of the verdicts and its lag probe), the workers, and the broker, between the
    first verdict and the last; judging's share of them (the rate's ratio on cores nobody
    else uses, if the workers never wait); and the cores other work took meanwhile."""
    assert measured.around is not None
    (t0, busy0, cpu0), (t1, busy1, cpu1) = measured.around
    records = measured.rate * (t1 - t0)
    spent = {name: cpu1[name] - cpu0.get(name, 0.0) for name in cpu1
             if "/profiler" not in name}  # py-spy's own CPU is left out
    parts = {"gateway": spent.pop("bench", 0.0),
             "workers": sum(v for k, v in spent.items() if "/worker" in k),
             "broker": sum(v for k, v in spent.items() if "/broker" in k)}
    ours = sum(spent.values()) + parts["gateway"]
    others = (busy1 - busy0 - ours) / (t1 - t0)
    each = {name: cpu / records * 1e6 for name, cpu in parts.items()}
    return ("CPU a trajectory: " + ", ".join(f"{k} {v:.0f} us" for k, v in each.items())
            + f", all {ours / records * 1e6:.0f} us; judging {judging_cpu * 1e6:.0f} us,"
            f" {judging_cpu / (ours / records):.2f} of it from CPU; other work took {others:.2f} "
            "cores meanwhile")


async def profiled(run: Awaitable[Measured], notes: list[str]) -> Measured:
    """``run`` profiled: with py-spy where it is installed (every process and thread of the
    gateway, sampled from outside, C code included; its summary added to ``notes``), else
    cProfile (the gateway's own thread only, each call slowed by the profiler)."""
    spy = shutil.which("py-spy", path=f"{Path(sys.executable).parent}{os.pathsep}"
                                        f"{os.environ.get('PATH', '')}")
    if spy is not None:
        return await spied(spy, run, notes)
    profile = cProfile.Profile()
    profile.enable()
    try:
        return await run
    finally:
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(20)


async def spied(spy: str, run: Awaitable[Measured], notes: list[str], top: int = 15
                ) -> Measured:
    """``run`` sampled by py-spy (100 a second, threads idle in a system call left out);
    in ``notes``: the samples' shares by process and thread, and the gateway process's
    functions that were running most (a function's own time, not its callees')."""
    with tempfile.NamedTemporaryFile(suffix=".txt") as out:
        sampler = await asyncio.create_subprocess_exec(
            spy, "record", "--pid", str(os.getpid()), "--subprocesses", "--nonblocking",
            "--rate", "100", "--format", "raw", "--output", out.name,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        try:
            return await run
        finally:
            sampler.send_signal(signal.SIGINT)  # py-spy writes its samples and exits
            await sampler.wait()
            text = await asyncio.to_thread(Path(out.name).read_text)
            notes.extend(summary(text.splitlines(), top))


def summary(lines: list[str], top: int) -> list[str]:
    me = f"process {os.getpid()}:"
    shares: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for line in lines:
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        processes = [f for f in frames if f.startswith("process ")]
        calls = frames[len(processes):]
        if len(processes) > 1:
            where = "workers" if "multiprocessing" in processes[-1] else "other processes"
        else:
            main = bool(calls) and not calls[0].startswith("Thread._bootstrap")
            where = "gateway's event loop" if main else "gateway's other threads"
            if calls:  # the frame running, as "function (package/module.py)"
                own[re.sub(r" \(.*?([^/]+/)?([^/]+\.py)?:?\d*\)$",
                           lambda m: f" ({m[1] or ''}{m[2] or ''})", calls[-1])] += int(count)
        shares[where] += int(count)
    total = sum(shares.values()) or 1
    mine = sum(own.values()) or 1
    return ["py-spy samples: " + ", ".join(f"{where} {n / total:.0%}"
                                           for where, n in shares.most_common()),
            f"the gateway's process ({me.removesuffix(':')}), running most:",
            *(f"  {n / mine:6.1%}  {frame}" for frame, n in own.most_common(top))]


def main(n: int, offline_n: int, rounds: int, profile: bool) -> None:
    values = bodies()
    latency(values)
    per_record(values)
    uvloop.run(gateways(values, n, offline_n, rounds, profile))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap")
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--offline-n", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true",
                        help="profile the gateway while the default number of workers judge "
                        "(py-spy if installed, else cProfile)")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        throughput.BOOTSTRAP = args.bootstrap or stack.enter_context(EmbeddedBroker()).bootstrap
        main(args.n, args.offline_n, args.rounds, args.profile)
