"""``monitor-gateway serve`` as a real process: SIGKILL mid-stream loses nothing, SIGTERM drains,
and a stop (Ctrl-C or SIGTERM) with workers busy is silent."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import aiohttp
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from kafka_io import Record, committed, consume, produce
from paths import TESTS, pythonpath

from monitor_gateway.embedded import free_port
from monitor_gateway.settings import GatewaySettings

pytestmark = pytest.mark.kafka


def serve(settings: GatewaySettings, **env: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    variables = {
        **os.environ,
        "PYTHONPATH": pythonpath(TESTS),  # this checkout's code, and tests/monitors.py
        "MONITOR_GATEWAY_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
        "MONITOR_GATEWAY_INPUT_TOPIC": settings.input_topic,
        "MONITOR_GATEWAY_VERDICT_TOPIC": settings.verdict_topic,
        "MONITOR_GATEWAY_DLQ_TOPIC": settings.dlq_topic,
        "MONITOR_GATEWAY_GROUP_ID": settings.group_id,
        "MONITOR_GATEWAY_METRICS_PORT": str(port),
        "MONITOR_GATEWAY_MONITOR": "monitors:slow",
        **env,
    }
    process = subprocess.Popen([sys.executable, "-m", "monitor_gateway", "serve"], env=variables)
    return process, port


async def wait_healthy(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            try:
                async with http.get(f"http://127.0.0.1:{port}/health") as response:
                    if response.status == 204:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise AssertionError("the gateway did not become healthy")


def trajectories(n: int) -> list[Record]:
    return [(f"t{i:05d}".encode(),
             json.dumps({"id": f"t{i:05d}", "request": "r", "response": f"answer {i}"}).encode(),
             []) for i in range(n)]


async def test_sigkill_mid_stream_loses_no_trajectory(settings: GatewaySettings) -> None:
    total = 2000
    await produce(settings.kafka_bootstrap, settings.input_topic, trajectories(total))
    seen: Counter[str] = Counter()
    watcher = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, group_id=None,
                               auto_offset_reset="earliest")
    await watcher.start()
    watcher.assign([TopicPartition(settings.verdict_topic, p) for p in (0, 1)])

    async def watch_until(count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while len(seen) < count and time.monotonic() < deadline:
            for records in (await watcher.getmany(timeout_ms=100)).values():
                seen.update(json.loads(r.value)["trajectory_id"] for r in records)

    slow = {"MONITOR_DELAY": "0.05", "MONITOR_GATEWAY_CONCURRENCY": "16"}
    try:
        first, _ = serve(settings, **slow)
        await watch_until(total // 4, timeout=60)
        first.send_signal(signal.SIGKILL)
        first.wait()
        killed_at = len(seen)
        assert 0 < killed_at < total, "the kill must land mid-stream"

        second, _ = serve(settings, MONITOR_DELAY="0")
        try:
            await watch_until(total, timeout=90)
        finally:
            second.terminate()
            second.wait(30)
    finally:
        await watcher.stop()

    missing = [f"t{i:05d}" for i in range(total) if f"t{i:05d}" not in seen]
    assert missing == []
    assert sum(seen.values()) >= total


async def test_sigterm_drains_then_exits_leaving_unfinished_work_uncommitted(
    settings: GatewaySettings,
) -> None:
    await produce(settings.kafka_bootstrap, settings.input_topic, trajectories(8))
    process, port = serve(settings, MONITOR_DELAY="30", MONITOR_GATEWAY_SHUTDOWN_GRACE="1")
    await wait_healthy(port)
    await asyncio.sleep(2)  # records fetched and in flight
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(20) == 0
    assert time.monotonic() - started < 10
    positions = await committed(settings.kafka_bootstrap, settings.group_id,
                                settings.input_topic)
    assert all((p or 0) == 0 for p in positions.values())

    process, _ = serve(settings, MONITOR_DELAY="0")
    try:
        verdicts = await consume(settings.kafka_bootstrap, settings.verdict_topic, 8, timeout=30)
    finally:
        process.terminate()
        process.wait(30)
    assert len({r.key for r in verdicts}) == 8


@pytest.mark.parametrize("ctrl_c", [True, False], ids=["ctrl-c", "sigterm"])
def test_a_gateway_with_workers_stopped_mid_stream_exits_silently(ctrl_c: bool) -> None:
    """``serve --embedded`` with two offline-monitor workers, stopped while they judge: by
    a terminal's Ctrl-C (SIGINT to the whole process group: gateway, workers and broker)
    or by SIGTERM to the gateway alone. It drains and exits 0, and its stderr holds its own
    log lines only: no worker's KeyboardInterrupt, no error from a broker gone first, no
    "Bad file descriptor" from the pool's shutdown."""
    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    variables = {**os.environ, "MONITOR_GATEWAY_WORKERS": "2",
                 "MONITOR_GATEWAY_MONITOR": "offline", "MONITOR_GATEWAY_METRICS_PORT": "0",
                 "MONITOR_GATEWAY_SHUTDOWN_GRACE": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "monitor_gateway", "serve", "--embedded", "--bootstrap",
         bootstrap], env=variables, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stderr is not None
    try:
        started: list[str] = []
        while not started or "gateway consuming" not in started[-1]:
            started.append(process.stderr.readline())
            assert started[-1], "".join(started)  # it exited before consuming
        settings = GatewaySettings()  # the topics serve created, by default name
        big = {"request": "Free disk on staging. " * 40,
               "response": "Ran sudo rm -rf /var/lib/postgresql/15/main/pg_wal. " * 40}
        asyncio.run(produce(bootstrap, settings.input_topic, [
            (f"t{i}".encode(), json.dumps({"id": f"t{i}", **big}).encode(), [])
            for i in range(1500)]))
        assert asyncio.run(consume(bootstrap, settings.verdict_topic, 1, timeout=60))
        if ctrl_c:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGTERM)
        _, rest = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    stderr = "".join(started) + rest
    assert process.returncode == 0, stderr[-3000:]
    assert "stopped: every finished trajectory's offset committed" in stderr
    alien = [line for line in stderr.splitlines()
             if not line.startswith("20") or " ERROR " in line or "Traceback" in line]
    assert alien == [], "\n".join(alien[:40])
