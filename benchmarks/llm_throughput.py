"""End-to-end gateway throughput with the LLM judge against a slow OpenAI-compatible
server (a separate process answering every call after 200 ms), per HTTP transport, and the
adaptive concurrency limit against it and against a server with a knee.

Goals: at least 0.9 x CONCURRENCY / latency (Little's limit), e.g. 0.9 x 64 / 0.2 s = 288
verdicts/s, with the adaptive limit on (the default), over the run and over a 7-second
burst (its ramp included; the fixed limit beside it); against a server with KNEE worker
slots (calls beyond them queue), the adaptive limit settles near the knee instead of at
the ceiling, at the same throughput and a fraction of the latency of a fixed CONCURRENCY.

    python benchmarks/llm_throughput.py [--n 6000] [--concurrency 64] [--knee 16]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time

import uvloop
from aiohttp import web
from throughput import fill, fresh, outputs, per_second

from monitor_gateway.embedded import EmbeddedBroker, free_port
from monitor_gateway.gateway import Gateway, tune_gc
from monitor_gateway.monitors.llm import LLMJudge, LLMSettings

LATENCY = 0.2
BURST = 7.0  # seconds of trajectories at the ideal rate
REPLY = {
    "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                 "message": {"role": "assistant", "content": '{"misbehavior": "no"}'}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


def serve(port: int, latency: float = LATENCY, knee: int | None = None) -> None:
    """The slow server: every chat completion answers after ``latency`` seconds. With a
    ``knee``, it has that many worker slots and calls beyond them queue, as an inference
    server's batch slots do: past the knee, more concurrency only adds latency."""
    slots = asyncio.Semaphore(knee) if knee else None

    async def complete(request: web.Request) -> web.Response:
        await request.read()
        if slots is None:
            await asyncio.sleep(latency)
        else:
            async with slots:
                await asyncio.sleep(latency)
        return web.json_response(REPLY)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", complete)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


async def measure(bootstrap: str, base_url: str, n: int, concurrency: int,
                  transport: str = "aiohttp", adaptive: bool = True) -> tuple[float, float]:
    """Verdicts a second over the whole run, and over its second half (past any ramp)."""
    settings = fresh(bootstrap, concurrency).model_copy(update={
        "monitor": "openai", "adaptive_concurrency": adaptive})
    llm = LLMSettings(openai_base_url=base_url, openai_model="bench",
                      openai_transport=transport, structured_output="none")
    await fill(settings, n)
    gateway = Gateway(settings, LLMJudge(settings, llm))
    limits: list[float] = []

    async def watch() -> None:
        while True:
            await asyncio.sleep(0.25)
            limits.append(gateway.metrics.concurrency_limit._value.get())

    await gateway.start()
    watcher = asyncio.create_task(watch())
    try:
        stamps = (await outputs(settings, n)).stamps
    finally:
        watcher.cancel()
        await gateway.stop()
    labels = {"backend": "openai"}
    calls = gateway.registry.get_sample_value(
        "monitor_gateway_monitor_latency_seconds_count", labels) or 1
    total = gateway.registry.get_sample_value(
        "monitor_gateway_monitor_latency_seconds_sum", labels) or 0
    half = limits[len(limits) // 2:] or [0.0]
    print(f"    mean monitor call {total / calls * 1000:.1f} ms; limit over the second half "
          f"of the run: {min(half):.0f}-{max(half):.0f} (median {statistics.median(half):.0f})")
    return per_second(stamps), per_second(stamps[n // 2:])


async def main(bootstrap: str, base_url: str, knee_url: str, n: int, concurrency: int,
               knee: int) -> None:
    tune_gc()
    ideal = concurrency / LATENCY
    print(f"LLM judge, server latency {LATENCY * 1000:.0f} ms, CONCURRENCY={concurrency}, "
          f"{n} trajectories: ideal {ideal:.0f}/s")
    for transport, adaptive in (("aiohttp", True), ("aiohttp", False), ("httpx", True)):
        rate, steady = await measure(bootstrap, base_url, n, concurrency, transport, adaptive)
        print(f"  openai client on {transport:<8} {'adaptive' if adaptive else 'fixed':<8} "
              f"{rate:6.1f}/s = {rate / ideal:.2f} x ideal over the run, {steady:6.1f}/s = "
              f"{steady / ideal:.2f} over its second half"
              + ("  (target >= 0.90)" if transport == "aiohttp" else ""))
    burst = round(BURST * ideal)
    print(f"a {BURST:g}-second burst ({burst} trajectories), where the adaptive limit's ramp "
          "from 4 calls weighs most:")
    for adaptive in (True, False):
        rate, _ = await measure(bootstrap, base_url, burst, concurrency, adaptive=adaptive)
        print(f"  {'adaptive' if adaptive else 'fixed':<8} {rate:6.1f}/s = {rate / ideal:.2f} x "
              "Little's limit" + ("  (target >= 0.90)" if adaptive else ""))
    capacity = knee / LATENCY
    print(f"server with {knee} worker slots (calls beyond them queue): capacity "
          f"{capacity:.0f}/s, CONCURRENCY={concurrency} as the ceiling")
    for adaptive in (False, True):
        rate, _ = await measure(bootstrap, knee_url, n // 2, concurrency, adaptive=adaptive)
        print(f"  {'adaptive' if adaptive else 'fixed':<8} {rate:7.1f} verdicts/s = "
              f"{rate / capacity:.2f} x capacity")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--latency", type=float, default=LATENCY, help=argparse.SUPPRESS)
    parser.add_argument("--knee", type=int, default=16,
                        help="worker slots of the second server")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency, args.knee)
        sys.exit(0)
    port, knee_port = free_port(), free_port()
    servers = [subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--knee", "0"]),
               subprocess.Popen([sys.executable, __file__, "--serve", str(knee_port),
                                 "--knee", str(args.knee)])]
    time.sleep(1.5)
    try:
        with EmbeddedBroker() as broker:
            uvloop.run(main(broker.bootstrap, f"http://127.0.0.1:{port}/v1",
                            f"http://127.0.0.1:{knee_port}/v1", args.n, args.concurrency,
                            args.knee))
    finally:
        for server in servers:
            server.terminate()
