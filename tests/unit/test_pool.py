"""WORKERS: a CPU-bound monitor judged in worker processes, never on the fetch loop."""

import asyncio
import json
import os

import pytest
from kafka_io import consume, produce, running

from monitor_gateway.monitors import build_monitor
from monitor_gateway.monitors.base import InlineMonitor
from monitor_gateway.monitors.offline import OfflineMonitor
from monitor_gateway.monitors.pool import WORKER_NICENESS, PooledMonitor
from monitor_gateway.monitors.registry import default_workers
from monitor_gateway.schema import Trajectory
from monitor_gateway.settings import GatewaySettings
from replay.sources import resolve


def test_the_offline_monitor_goes_to_workers_unless_told_and_rules_stays_inline() -> None:
    offline = build_monitor(GatewaySettings(monitor="offline"))
    assert isinstance(offline, PooledMonitor) and offline.workers == default_workers()
    assert not isinstance(offline, InlineMonitor)  # the gateway treats it as asynchronous
    assert isinstance(build_monitor(GatewaySettings(monitor="offline", workers=0)),
                      OfflineMonitor)
    assert isinstance(build_monitor(GatewaySettings(monitor="rules")), InlineMonitor)
    asyncio.run(offline.aclose())


async def test_workers_judge_as_the_monitor_does_inline() -> None:
    samples = [Trajectory.model_validate(s.trajectory())
               for s in resolve("realistic", "test")[:40]]
    inline = build_monitor(GatewaySettings(monitor="offline", workers=0))
    pooled = build_monitor(GatewaySettings(monitor="offline", workers=2))
    assert isinstance(inline, InlineMonitor) and isinstance(pooled, PooledMonitor)
    try:
        judged = await asyncio.gather(*(pooled.judge(s) for s in samples))
    finally:
        await pooled.aclose()
    assert judged == [inline.judge_now(s) for s in samples]
    assert pooled.card == inline.card


async def test_a_dead_worker_is_replaced_and_only_its_call_fails() -> None:
    pooled = build_monitor(GatewaySettings(monitor="monitors:crashing", workers=1))
    assert isinstance(pooled, PooledMonitor)
    try:
        first = await pooled.judge(Trajectory(id="a", request="BAD", response="x"))
        with pytest.raises(Exception, match="terminated abruptly"):
            await pooled.judge(Trajectory(id="c", request="CRASH", response="x"))
        after = await pooled.judge(Trajectory(id="b", request="fine", response="x"))
    finally:
        await pooled.aclose()
    assert first.score == 0.9 and after.score == 0.1
    assert first.rationale != after.rationale  # a new process judged it
    assert str(os.getpid()) not in (first.rationale or "")


async def test_workers_yield_the_cpu_to_the_fetch_loop() -> None:
    """Judging is throughput work: the workers run at a lower priority than the gateway."""
    pooled = build_monitor(GatewaySettings(monitor="monitors:crashing", workers=1))
    assert isinstance(pooled, PooledMonitor)
    try:
        judged = await pooled.judge(Trajectory(id="a", request="fine", response="x"))
    finally:
        await pooled.aclose()
    expected = min(19, os.nice(0) + WORKER_NICENESS)
    assert (judged.rationale or "").endswith(f"at niceness {expected}")


async def test_through_the_gateway_a_crashing_trajectory_gets_an_error_verdict(
    settings: GatewaySettings,
) -> None:
    """The crash is retried (MONITOR_RETRIES) then becomes an error verdict; the
    trajectories whose calls it broke are judged all the same."""
    settings = settings.model_copy(update={"monitor": "monitors:crashing", "workers": 2,
                                           "monitor_timeout": 30.0})
    bodies = [Trajectory(id=f"t{i}", request="CRASH" if i == 3 else "BAD" if i % 2 else "ok",
                         response="x") for i in range(8)]
    async with running(settings, build_monitor(settings)):
        await produce(settings.kafka_bootstrap, settings.input_topic,
                      [(b.id.encode(), b.model_dump_json().encode(), []) for b in bodies])
        records = await consume(settings.kafka_bootstrap, settings.verdict_topic, 8)
    verdicts = {v["trajectory_id"]: v for v in (json.loads(r.value) for r in records)}
    assert verdicts["t3"]["status"] == "error" and "abruptly" in verdicts["t3"]["error"]
    assert all(verdicts[f"t{i}"]["flagged"] is bool(i % 2) for i in range(8) if i != 3)
