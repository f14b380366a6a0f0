"""A soak: the gateway as `monitor-gateway serve` runs it, for minutes at a steady rate, so
a leak or a latency creep shows as a figure.

The gateway runs in its own process (with its worker processes, when the monitor has
them) against the embedded broker. This process sends realistic trajectories at a fixed
rate, half the capacity measured first (the offline monitor: the gateway draining a
backlog; the LLM judge: Little's limit, CONCURRENCY / the stub's latency), reads the
verdicts, and prints for every minute: the verdicts' end-to-end latency (sent by this
process to read back by it) at the 50th, 99th percentile and worst, the gateway's consumer
lag (from its /metrics), the resident memory of every process of the gateway, and the
machine's load average (on a shared machine, others' work slows the niced workers).
Targets: resident memory grows by at most 10% between minute 2 and the last minute, the
gateway's processes hold at most 300 MB together, and the last minute's p99 latency is
within 1.5 times the second minute's.

The producers batch, as a production producer under steady load does: this process's
lingers 100 ms and the gateway's (LINGER_MS) 50 ms, both inside the latency measured. The
embedded broker keeps every batch as an object and lists all of a partition's objects on
every fetch that finds new records (benchmarks/broker_fetch.py measures it), so its CPU
grows with the batches held; with one batch a partition every 20 ms tick (run 51's 5 ms)
it took a whole core within three minutes, on the gateway's cores.

    python benchmarks/soak.py [--minutes 10] [--judge offline|llm] [--rate N]
        [--linger-ms MS] [--verdict-linger-ms MS]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncGenerator
from pathlib import Path

import uvloop
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from offline import bodies, cycled
from processes import tree
from throughput import PARTITIONS, fresh

from monitor_gateway.embedded import EmbeddedBroker, create_topics, free_port
from monitor_gateway.settings import ENV_PREFIX, GatewaySettings

HERE = Path(__file__).parent
STUB_LATENCY = 1.0  # seconds the LLM stub takes to answer a call
CONCURRENCY = 64


def short(name: str) -> str:
    return name.removeprefix("soak/")


def lag(metrics_port: int) -> float:
    """The gateway's consumer lag over its partitions, as it reports it."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as r:
        text = r.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("monitor_gateway_consumer_lag{"))


class Gateway:
    """`monitor-gateway serve` in its own process, with the settings' topics and group."""

    def __init__(self, settings: GatewaySettings, judge: str, stub: str | None,
                 linger_ms: int | None = None) -> None:  # None: the gateway's default
        self.metrics_port = free_port()
        env = {**os.environ, f"{ENV_PREFIX}FETCH_MAX_WAIT_MS": "100"}
        if linger_ms is not None:
            env[f"{ENV_PREFIX}LINGER_MS"] = str(linger_ms)
        if stub is not None:
            env |= {f"{ENV_PREFIX}OPENAI_BASE_URL": stub, f"{ENV_PREFIX}OPENAI_MODEL": "bench",
                    f"{ENV_PREFIX}STRUCTURED_OUTPUT": "none"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "monitor_gateway", "serve",
             "--bootstrap", settings.kafka_bootstrap, "--input-topic", settings.input_topic,
             "--verdict-topic", settings.verdict_topic, "--dlq-topic", settings.dlq_topic,
             "--group-id", settings.group_id, "--monitor", judge,
             "--concurrency", str(CONCURRENCY), "--metrics-port", str(self.metrics_port),
             "--log-level", "WARNING"], env=env)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


async def topics(settings: GatewaySettings) -> None:
    await create_topics(settings, {settings.input_topic: PARTITIONS,
                                   settings.verdict_topic: PARTITIONS, settings.dlq_topic: 1})


async def capacity(bootstrap: str, judge: str, stub: str | None, n: int) -> float:
    """Verdicts a second while the gateway drains a backlog of ``n`` trajectories."""
    settings = fresh(bootstrap, CONCURRENCY)
    await topics(settings)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
    await producer.start()
    try:
        sent = [await producer.send(settings.input_topic, value, key=key)
                for _, (key, value) in zip(range(n), cycled(bodies()), strict=False)]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()
    gateway = Gateway(settings, judge, stub)
    try:
        stamps = sorted([stamp async for stamp, _ in verdicts(settings, n)])
    finally:
        gateway.stop()
    warm = len(stamps) // 10  # past the workers' first, slower calls
    return (len(stamps) - 1 - warm) / ((stamps[-1] - stamps[warm]) / 1000)


async def verdicts(settings: GatewaySettings, n: int | None = None,
                   timeout: float = 3600) -> AsyncGenerator[tuple[int, bytes], None]:
    """The verdicts' broker timestamps and keys (trajectory ids) as they are read."""
    consumer = AIOKafkaConsumer(settings.verdict_topic, bootstrap_servers=settings.kafka_bootstrap,
                                group_id=None, auto_offset_reset="earliest",
                                fetch_max_wait_ms=50)
    await consumer.start()
    seen, deadline = 0, time.monotonic() + timeout
    try:
        while (n is None or seen < n) and time.monotonic() < deadline:
            for records in (await consumer.getmany(timeout_ms=200)).values():
                for record in records:
                    seen += 1
                    yield record.timestamp, record.key or b""
    finally:
        await consumer.stop()


class Minute:
    """What one minute of the soak saw."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.lags: list[float] = []
        self.rss: dict[str, float] = {}
        self.cpu: dict[str, float] = {}  # share of a core over the minute

    def p(self, q: float) -> float:
        ordered = sorted(self.latencies) or [float("nan")]
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def total(self) -> float:
        return sum(self.rss.values())

    def cores(self, role: str) -> float:
        """The share of a core the processes named ``role`` used over the minute."""
        return sum(share for name, share in self.cpu.items() if role in name)

    def cpu_a_verdict(self, role: str) -> float:
        """Their CPU milliseconds a verdict read in the minute."""
        return self.cores(role) * 60 * 1000 / max(1, len(self.latencies))


async def soak(bootstrap: str, judge: str, stub: str | None, rate: float, minutes: int,
               linger_ms: int, verdict_linger_ms: int) -> list[Minute]:
    settings = fresh(bootstrap, CONCURRENCY)
    await topics(settings)
    gateway = Gateway(settings, judge, stub, verdict_linger_ms)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=linger_ms,
                                max_batch_size=256 * 1024)
    await producer.start()
    sent_at: dict[bytes, float] = {}
    seen: list[Minute] = []
    trajectories = cycled(bodies())
    reading = verdicts(settings)
    try:
        key, value = next(trajectories)  # the first verdict: the gateway has joined its group
        await producer.send_and_wait(settings.input_topic, value, key=key)
        await anext(reading)
        started = time.monotonic()

        async def send() -> None:
            due = 0.0
            while (elapsed := time.monotonic() - started) < minutes * 60:
                while due < elapsed * rate:
                    key, value = next(trajectories)
                    sent_at[key] = time.monotonic()
                    await producer.send(settings.input_topic, value, key=key)
                    due += 1
                await asyncio.sleep(0.02)

        async def read() -> None:
            async for _, key in reading:
                now = time.monotonic()
                if key in sent_at and seen:
                    seen[-1].latencies.append(now - sent_at.pop(key))

        def sample() -> dict[str, tuple[float, float]]:  # this process's tree, and its
            return tree(os.getpid(), "soak")  # gateway's, broker's, stub's

        async def watch() -> None:
            before = sample()
            for minute in range(minutes):
                seen.append(Minute())
                while time.monotonic() - started < (minute + 1) * 60:
                    await asyncio.sleep(5)
                    with contextlib.suppress(OSError):
                        seen[-1].lags.append(lag(gateway.metrics_port))
                current, now = seen[-1], sample()
                current.rss = {name: mb for name, (mb, _) in now.items()
                               if "gateway" in name}
                current.cpu = {name: (cpu - before.get(name, (0, 0))[1]) / 60
                               for name, (_, cpu) in now.items()}
                before = now
                print(f"  minute {minute + 1:>2}: {len(current.latencies):6d} verdicts, "
                      f"latency p50 {current.p(0.5) * 1000:6.0f} ms, p99 "
                      f"{current.p(0.99) * 1000:6.0f} ms, max {current.p(1.0) * 1000:6.0f} ms; "
                      f"lag mean {statistics.fmean(current.lags or [0]):5.0f}, max "
                      f"{max(current.lags or [0]):5.0f}; RSS MB "
                      + ", ".join(f"{short(name)} {mb:.0f}"
                                  for name, mb in sorted(current.rss.items()))
                      + f", total {current.total:.0f}; CPU (cores) "
                      + ", ".join(f"{short(name)} {share:.2f}"
                                  for name, share in sorted(current.cpu.items()))
                      + f"; machine load {os.getloadavg()[0]:.1f}", flush=True)

        reader = asyncio.create_task(read())
        await asyncio.gather(send(), watch())
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
    finally:
        await producer.stop()
        await reading.aclose()
        gateway.stop()
    return seen


def summary(seen: list[Minute]) -> None:
    if len(seen) < 2:
        return
    second, last = seen[1], seen[-1]
    growth = last.total / second.total - 1
    most = max(m.total for m in seen)
    print(f"  RSS of the gateway's processes: minute 2 {second.total:.0f} MB, minute "
          f"{len(seen)} {last.total:.0f} MB: growth {growth * 100:+.1f}% (target <= 10%); "
          f"most {most:.0f} MB (target <= 300)")
    print(f"  p99 latency: minute 2 {second.p(0.99) * 1000:.0f} ms, minute {len(seen)} "
          f"{last.p(0.99) * 1000:.0f} ms: ratio {last.p(0.99) / second.p(0.99):.2f} "
          "(target <= 1.5)")
    print(f"  what a creep would come from: CPU of the gateway's processes a verdict, minute "
          f"2 {second.cpu_a_verdict('gateway'):.2f} ms, minute {len(seen)} "
          f"{last.cpu_a_verdict('gateway'):.2f} ms; the broker's CPU, minute 2 "
          f"{second.cores('broker'):.2f} cores ({second.cpu_a_verdict('broker'):.2f} ms a "
          f"verdict), minute {len(seen)} {last.cores('broker'):.2f} "
          f"({last.cpu_a_verdict('broker'):.2f} ms) (a broker this process did not start is "
          "not seen)")


async def main(bootstrap: str, judge: str, stub: str | None, rate: float | None,
               minutes: int, capacity_n: int, linger_ms: int, verdict_linger_ms: int) -> None:
    monitor = "openai" if judge == "llm" else judge
    if rate is None:
        if judge == "llm":
            measured = CONCURRENCY / STUB_LATENCY
            print(f"capacity: Little's limit, {CONCURRENCY} / {STUB_LATENCY:g} s = "
                  f"{measured:.0f}/s")
        else:
            measured = await capacity(bootstrap, monitor, stub, capacity_n)
            print(f"capacity: {measured:.0f} verdicts/s, draining {capacity_n} trajectories")
        rate = measured / 2
    print(f"soak: MONITOR={monitor}, {rate:.0f} trajectories/s for {minutes} minutes; "
          f"producer linger {linger_ms} ms, the gateway's LINGER_MS {verdict_linger_ms} ms")
    summary(await soak(bootstrap, monitor, stub, rate, minutes, linger_ms, verdict_linger_ms))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--judge", choices=("offline", "llm"), default="offline",
                        help=f"llm: the LLM judge against a stub answering in {STUB_LATENCY:g} s")
    parser.add_argument("--rate", type=float, help="trajectories a second (default: half the "
                        "measured capacity)")
    parser.add_argument("--capacity-n", type=int, default=4000)
    parser.add_argument("--bootstrap")
    parser.add_argument("--linger-ms", type=int, default=100,
                        help="this process's producer's linger (run 51: 5)")
    parser.add_argument("--verdict-linger-ms", type=int, default=50,
                        help="the gateway's LINGER_MS (run 51: its default, 5)")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        stub = None
        if args.judge == "llm":
            port = free_port()
            server = subprocess.Popen([sys.executable, str(HERE / "llm_throughput.py"), "--serve",
                                       str(port), "--knee", "0", "--latency", str(STUB_LATENCY)])
            stack.callback(server.terminate)
            stub = f"http://127.0.0.1:{port}/v1"
            time.sleep(1.5)
        bootstrap = args.bootstrap or stack.enter_context(EmbeddedBroker()).bootstrap
        uvloop.run(main(bootstrap, args.judge, stub, args.rate, args.minutes, args.capacity_n,
                        args.linger_ms, args.verdict_linger_ms))
