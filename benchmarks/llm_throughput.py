"""End-to-end gateway throughput with the LLM judge against a slow OpenAI-compatible
server (a separate process answering every call after 200 ms), per HTTP transport.

Goal: at least 0.9 x CONCURRENCY / latency, e.g. 0.9 x 64 / 0.2 s = 288 verdicts/s.

    python benchmarks/llm_throughput.py [--n 4000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time

import uvloop
from aiohttp import web
from throughput import fill, fresh, output_rate

from monitor_gateway.embedded import EmbeddedBroker, free_port
from monitor_gateway.gateway import Gateway, tune_gc
from monitor_gateway.monitors import build_monitor

LATENCY = 0.2
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
                  transport: str) -> float:
    settings = fresh(bootstrap, concurrency).model_copy(update={
        "monitor": "openai", "openai_base_url": base_url, "openai_model": "bench",
        "openai_transport": transport, "structured_output": "none"})
    await fill(settings, n)
    gateway = Gateway(settings, build_monitor(settings))
    await gateway.start()
    try:
        rate = await output_rate(settings, n)
    finally:
        await gateway.stop()
    labels = {"backend": "openai"}
    calls = gateway.registry.get_sample_value(
        "monitor_gateway_monitor_latency_seconds_count", labels) or 1
    total = gateway.registry.get_sample_value(
        "monitor_gateway_monitor_latency_seconds_sum", labels) or 0
    print(f"    mean monitor call {total / calls * 1000:.1f} ms")
    return rate


async def main(bootstrap: str, base_url: str, n: int, concurrency: int) -> None:
    tune_gc()
    ideal = concurrency / LATENCY
    print(f"LLM judge, server latency {LATENCY * 1000:.0f} ms, CONCURRENCY={concurrency}, "
          f"{n} trajectories: ideal {ideal:.0f}/s")
    for transport in ("aiohttp", "httpx"):
        rate = await measure(bootstrap, base_url, n, concurrency, transport)
        print(f"  openai client on {transport:<8} {rate:7.1f} verdicts/s = {rate / ideal:.2f} "
              f"x ideal" + ("  (target >= 0.90)" if transport == "aiohttp" else ""))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--latency", type=float, default=LATENCY, help=argparse.SUPPRESS)
    parser.add_argument("--knee", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency, args.knee)
        sys.exit(0)
    port = free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    time.sleep(1.5)
    try:
        with EmbeddedBroker() as broker:
            uvloop.run(main(broker.bootstrap, f"http://127.0.0.1:{port}/v1", args.n,
                            args.concurrency))
    finally:
        server.terminate()
