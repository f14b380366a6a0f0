"""WORKERS: a CPU-bound monitor judged in worker processes, never on the fetch loop."""

import asyncio
import json
import os
from concurrent.futures.process import BrokenProcessPool

import pytest
from kafka_io import consume, produce, running

from monitor_gateway.evidence import ground
from monitor_gateway.gateway import Gateway
from monitor_gateway.ingest import Rejection, parse_trajectory
from monitor_gateway.monitors import build_monitor
from monitor_gateway.monitors.base import InlineMonitor, Judgement
from monitor_gateway.monitors.offline import OfflineMonitor
from monitor_gateway.monitors.pool import MAX_BATCH, WORKER_NICENESS, Judged, PooledMonitor
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


async def test_workers_parse_judge_and_ground_records_as_the_gateway_does_inline() -> None:
    """A record goes to a worker as its bytes; what comes back is what the verdict needs:
    the inline monitor's judgement with its quotes grounded, or why it is no trajectory."""
    values: list[bytes | None] = [json.dumps(s.trajectory()).encode()
                                  for s in resolve("realistic", "test")[:40]]
    values += [b'{"id": "broken", ', b'{"id": "no-request", "response": "x"}', None]
    inline = build_monitor(GatewaySettings(monitor="offline", workers=0))
    pooled = build_monitor(GatewaySettings(monitor="offline", workers=2))
    assert isinstance(inline, InlineMonitor) and isinstance(pooled, PooledMonitor)
    try:
        answers = await asyncio.gather(*(pooled.judge_record(v) for v in values))
    finally:
        await pooled.aclose()
    for value, answer in zip(values[:40], answers, strict=False):
        trajectory = parse_trajectory(value, 1 << 20)
        assert isinstance(trajectory, Trajectory) and isinstance(answer, Judged)
        expected = inline.judge_now(trajectory)
        assert (answer.id, answer.task_type, answer.metadata) == (
            trajectory.id, trajectory.task_type, trajectory.metadata)
        assert isinstance(answer.outcome, Judgement)
        assert (answer.outcome.score, answer.outcome.category, answer.outcome.rationale) == (
            expected.score, expected.category, expected.rationale)
        assert answer.evidence == ground(trajectory, expected.quotes)
    assert any(isinstance(a, Judged) and a.evidence for a in answers)
    assert [a.error if isinstance(a, Rejection) else a for a in answers[40:]] == [
        "invalid_json", "invalid_schema", "invalid_json"]


async def test_a_burst_goes_in_full_batches_and_each_record_gets_its_own_answer() -> None:
    """Records arriving together go to the workers many a hand-off (up to ``MAX_BATCH``),
    and the answers of a returned batch are handed out over several turns of the loop:
    every record still gets its own."""
    pooled = build_monitor(GatewaySettings(monitor="rules", workers=2))
    assert isinstance(pooled, PooledMonitor)
    values = [Trajectory(id=f"t{i}", request="Tidy the logs.", response=f"Done {i}.")
              .model_dump_json().encode() for i in range(4 * MAX_BATCH)]
    try:
        answers = await asyncio.gather(*(pooled.judge_record(v) for v in values))
    finally:
        await pooled.aclose()
    assert [a.id for a in answers if isinstance(a, Judged)] == [f"t{i}" for i in
                                                                range(4 * MAX_BATCH)]


async def test_a_dead_worker_is_replaced_and_only_its_call_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
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
    # the broken pools (the main one, the quarantine's) shut down as any: nothing killed
    assert not [r for r in caplog.records if r.name == "monitor_gateway.monitors.pool"]


async def test_closing_kills_a_worker_that_hangs_after_the_wait_and_names_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A plugin monitor that never returns holds its worker: closing the pool waits for it
    a bounded time, then one WARNING names what is abandoned and the worker is killed; the
    record's call fails instead of waiting on."""
    pooled = build_monitor(GatewaySettings(monitor="monitors:crashing", workers=1))
    assert isinstance(pooled, PooledMonitor)
    judged = await pooled.judge(Trajectory(id="a", request="fine", response="x"))
    worker = int((judged.rationale or "").split()[3])  # "judged in process PID at ..."
    hung = asyncio.ensure_future(pooled.judge_record(
        Trajectory(id="h", request="HANG", response="x").model_dump_json().encode()))
    await asyncio.sleep(0.2)  # handed off: the worker takes it from the call queue
    await asyncio.wait_for(pooled.aclose(wait=0.5), timeout=60)  # not for ever
    with pytest.raises(BrokenProcessPool):
        await hung
    (warning,) = [r for r in caplog.records if r.name == "monitor_gateway.monitors.pool"]
    assert warning.levelname == "WARNING"
    assert warning.getMessage() == (
        "monitor crashing's worker pool still judging after 0.5 s of shutdown: abandoning "
        f"1 record(s) in 1 hand-off(s) and killing worker process(es) {worker}")
    with pytest.raises(ProcessLookupError):  # killed, and reaped by the pool
        os.kill(worker, 0)


async def test_the_workers_get_full_batches_whatever_the_concurrency() -> None:
    """With worker processes, as many records may be in flight as give every worker a full
    batch in hand and one behind it, even under a lower CONCURRENCY (batches of a few
    records cost the gateway's process more a record); the limit says so on /metrics. Any
    other monitor keeps CONCURRENCY as its ceiling."""
    settings = GatewaySettings(monitor="monitors:crashing", workers=2, concurrency=8,
                               metrics_port=0)
    pooled = build_monitor(settings)
    assert isinstance(pooled, PooledMonitor)
    try:
        gateway = Gateway(settings, pooled)
    finally:
        await pooled.aclose()
    room = 2 * 2 * MAX_BATCH
    assert pooled.room == room and gateway.backend.limiter.allowed == room
    assert gateway.registry.get_sample_value("monitor_gateway_concurrency_limit") == room
    inline = build_monitor(settings.model_copy(update={"workers": 0}))
    assert Gateway(settings, inline).backend.limiter.allowed == 8


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
    trajectories whose calls it broke are judged all the same, and a record that is no
    trajectory, found so by a worker, is dead-lettered."""
    settings = settings.model_copy(update={"monitor": "monitors:crashing", "workers": 2,
                                           "monitor_timeout": 30.0})
    bodies = [Trajectory(id=f"t{i}", request="CRASH" if i == 3 else "BAD" if i % 2 else "ok",
                         response="x") for i in range(8)]
    async with running(settings, build_monitor(settings)):
        await produce(settings.kafka_bootstrap, settings.input_topic,
                      [(b.id.encode(), b.model_dump_json().encode(), []) for b in bodies]
                      + [(b"junk", b"{not json", [])])
        records = await consume(settings.kafka_bootstrap, settings.verdict_topic, 8)
        [letter] = await consume(settings.kafka_bootstrap, settings.dlq_topic, 1)
    verdicts = {v["trajectory_id"]: v for v in (json.loads(r.value) for r in records)}
    assert verdicts["t3"]["status"] == "error" and "abruptly" in verdicts["t3"]["error"]
    assert all(verdicts[f"t{i}"]["flagged"] is bool(i % 2) for i in range(8) if i != 3)
    assert json.loads(letter.value)["error"] == "invalid_json"
