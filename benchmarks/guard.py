"""The pre-execution guard's latency (issue 36's target: p99 <= 10 ms at 200 calls/s with the
offline monitor), beside the in-process judging time of the same calls in the same run.

The calls: every tool call of the realistic test split's runs, each proposed after the
steps before it (the run so far). Baseline: those runs judged in this process by the
offline monitor, call by call (what no HTTP, no JSON and no event loop would cost). Then
``monitor-gateway guard`` runs as its own process (the offline monitor, decisions
published to the embedded broker), and calls arrive open-loop at ``--rate`` a second for
``--seconds``: each one is sent at its scheduled time whatever the earlier ones are doing,
and its latency is counted from that scheduled time (a client that fell behind adds its
lag: no coordinated omission). Two variants, alternated ``--rounds`` times so that other
load on the machine falls on both: ``WORKERS=0`` (judged on the guard's event loop) and
``WORKERS`` unset (the monitor's choice: the offline monitor's worker processes, one a
core); each one's figures are printed with the p99 as a ratio to the in-process p99, and
whether p99 <= 10 ms holds, with the machine's load average.

    python benchmarks/guard.py [--rate 200] [--seconds 30] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import aiohttp
import uvloop

from monitor_gateway.embedded import EmbeddedBroker, create_topics, free_port
from monitor_gateway.monitors.offline import from_settings
from monitor_gateway.monitors.registry import default_workers
from monitor_gateway.schema import GuardRequest
from monitor_gateway.settings import GatewaySettings
from replay.sources import resolve

ROOT = Path(__file__).resolve().parent.parent
TARGET_P99 = 0.010
TOPIC = "guard.decisions"


def requests() -> list[GuardRequest]:
    """Each tool call of the realistic test split's runs, after the steps before it."""
    found = []
    for sample in resolve("realistic", "test"):
        for i, step in enumerate(sample.steps):
            for call in step.tool_calls:
                found.append(GuardRequest(trajectory={
                    "id": sample.id, "request": sample.request,
                    "steps": [s.model_dump(exclude_defaults=True) for s in sample.steps[:i]]},
                    call=call))
    return found


def in_process(calls: list[GuardRequest]) -> list[float]:
    """Seconds the offline monitor takes to judge each call's run in this process."""
    monitor = from_settings(GatewaySettings(monitor="offline"))
    judged = [call.judged() for call in calls]
    for trajectory in judged[:50]:  # warm
        monitor.judge_now(trajectory)
    seconds = []
    for trajectory in judged:
        started = time.perf_counter()
        monitor.judge_now(trajectory)
        seconds.append(time.perf_counter() - started)
    return seconds


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def load(url: str, bodies: list[bytes], rate: float, seconds: float
               ) -> tuple[list[float], int, float]:
    """Open-loop calls at ``rate``/s: each latency from its scheduled time; the calls that
    got no 200, and the rate achieved."""
    n = int(rate * seconds)
    latencies: list[float] = []
    failed = 0
    connector = aiohttp.TCPConnector(limit=256)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def one(body: bytes, scheduled: float) -> None:
            nonlocal failed
            async with http.post(url, data=body,
                                 headers={"Content-Type": "application/json"}) as response:
                await response.read()
                if response.status != 200:
                    failed += 1
            latencies.append(time.perf_counter() - scheduled)

        for body in bodies[:100]:  # warm: connections, the guard's first calls
            await one(body, time.perf_counter())
        latencies.clear()
        tasks = []
        start = time.perf_counter()
        for i in range(n):
            scheduled = start + i / rate
            delay = scheduled - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(bodies[i % len(bodies)], scheduled)))
        await asyncio.gather(*tasks)
        achieved = n / (time.perf_counter() - start)
    return latencies, failed, achieved


def serve(bootstrap: str, port: int, workers: int | None) -> subprocess.Popen[bytes]:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("MONITOR_GATEWAY_")}
    env |= {"MONITOR_GATEWAY_KAFKA_BOOTSTRAP": bootstrap, "MONITOR_GATEWAY_MONITOR": "offline",
            "MONITOR_GATEWAY_GUARD_PORT": str(port), "MONITOR_GATEWAY_GUARD_TOPIC": TOPIC,
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])}
    if workers is not None:
        env["MONITOR_GATEWAY_WORKERS"] = str(workers)
    process = subprocess.Popen([sys.executable, "-m", "monitor_gateway", "guard",
                                "--log-level", "WARNING"], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the guard did not start")


def published(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    wanted = ("monitor_gateway_guard_decisions_published_total",
              "monitor_gateway_guard_decisions_pending", "monitor_gateway_guard_decisions_dropped")
    return ", ".join(line.split("monitor_gateway_guard_")[1] for line in text.splitlines()
                     if line.startswith(wanted))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    calls = requests()
    bodies = [json.dumps(call.model_dump(mode="json")).encode() for call in calls]
    sizes = sorted(len(b) for b in bodies)
    baseline = in_process(calls)
    base99 = quantile(baseline, 0.99)
    print(f"{len(calls)} calls from the realistic test split's runs (request bodies "
          f"{sizes[0]:,}-{sizes[-1]:,} bytes, median {statistics.median(sizes):,.0f})")
    print(f"in process, the offline monitor alone: p50 {quantile(baseline, 0.5) * 1000:.2f} "
          f"ms, p99 {base99 * 1000:.2f} ms, max {max(baseline) * 1000:.2f} ms")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with EmbeddedBroker() as broker:
        settings = GatewaySettings(kafka_bootstrap=broker.bootstrap)
        asyncio.run(create_topics(settings, {TOPIC: 4}))
        for workers in [0, None] * args.rounds:
            port = free_port()
            process = serve(broker.bootstrap, port, workers)
            try:
                latencies, failed, achieved = uvloop.run(load(
                    f"http://127.0.0.1:{port}/check", bodies, args.rate, args.seconds))
                time.sleep(1.0)  # the decisions' acknowledgements
                decisions = published(port)
            finally:
                process.terminate()
                process.wait(30)
            p50, p99 = quantile(latencies, 0.5), quantile(latencies, 0.99)
            where = ("on the guard's event loop (WORKERS=0)" if workers == 0
                     else f"in worker processes (WORKERS unset: {default_workers()})")
            print(f"guard over HTTP, judged {where}: {len(latencies)} calls at "
                  f"{achieved:.0f}/s ({failed} not 200): p50 {p50 * 1000:.2f} ms, p99 "
                  f"{p99 * 1000:.2f} ms, max {max(latencies) * 1000:.2f} ms; p99 / in-process "
                  f"p99 = {p99 / base99:.2f}; p99 <= {TARGET_P99 * 1000:g} ms: "
                  f"{'holds' if p99 <= TARGET_P99 else 'NOT MET'}; decisions: {decisions}; "
                  f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
