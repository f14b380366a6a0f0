"""Hostile records and faults against the real broker: every fetched record ends in exactly
one verdict or dead letter, nothing is committed past an unfinished one, and nothing is
written anywhere but the verdict and dead-letter topics."""

from __future__ import annotations

import asyncio
import json
import uuid

import aiohttp
import pytest
from aiokafka import TopicPartition
from kafka_io import Record, committed, consume, outcomes, produce, running
from monitors import card

from monitor_gateway.embedded import create_topics
from monitor_gateway.monitors import Judgement, RulesMonitor
from monitor_gateway.schema import Trajectory
from monitor_gateway.settings import GatewaySettings

pytestmark = pytest.mark.kafka

Headers = list[tuple[str, bytes | None]]
REPLAY: Headers = [("x-monitor-replay-run", b"run-9"), ("x-monitor-replay-label", b"benign"),
                   ("x-monitor-replay-category", b"sycophancy_bias")]


def hostile_headers(i: int) -> Headers:
    """Kafka header values are bytes, or null: any producer may send any."""
    kinds: list[Headers] = [
        [("trace", b"\x80\xff")],  # not UTF-8
        [("trace", None)],  # null
        [("x-monitor-replay-run", b"\xffrun"), *REPLAY[1:]],  # replay run unreadable
        [*REPLAY[:1], ("x-monitor-replay-label", None), *REPLAY[2:]],  # label null
        [("reply_to", b"\xfe"), ("content-type", b"\x80")],
        [],
        REPLAY,
    ]
    return kinds[i % len(kinds)]


async def test_unreadable_header_values_never_lose_a_record(settings: GatewaySettings) -> None:
    n = 700
    records: list[Record] = []
    for i in range(n):
        value = (json.dumps({"id": f"t{i}", "request": "q", "response": "fine"}).encode()
                 if i % 10 else b"{broken")
        records.append((f"t{i}".encode(), value, hostile_headers(i)))
    async with running(settings, RulesMonitor()) as gateway:
        await produce(settings.kafka_bootstrap, settings.input_topic, records)
        verdicts, letters, positions = await outcomes(settings, n - n // 10, n // 10)
        assert await gateway.healthy()
        replayed = gateway.registry.get_sample_value(
            "monitor_gateway_replay_outcomes_total",
            {"outcome": "tn", "category": "sycophancy_bias", "task_type": "none"})

    ended = sorted([r.key for r in verdicts] + [r.key for r in letters])
    assert ended == sorted(k for k, _, _ in records)  # exactly one outcome each
    assert sum(p or 0 for p in positions.values()) == n
    for record in verdicts:
        verdict = json.loads(record.value)
        i = int(verdict["trajectory_id"][1:])
        readable_replay = hostile_headers(i) == REPLAY
        # an unreadable replay header makes the record production traffic: nothing false
        assert (verdict["replay_run"] == "run-9") is readable_replay
        echoed = {k for k, _ in record.headers if k.startswith("x-monitor-replay")}
        assert bool(echoed) is readable_replay
    assert replayed == sum(1 for i in range(n) if i % 10 and hostile_headers(i) == REPLAY)


async def test_a_reply_to_header_writes_nowhere_else(settings: GatewaySettings) -> None:
    elsewhere = f"elsewhere-{uuid.uuid4().hex[:8]}"
    await create_topics(settings, {elsewhere: 1})
    headers = [("reply_to", elsewhere.encode()), ("correlation_id", b"c-1"),
               ("content-type", b"application/json")]
    bodies = [{"id": f"r{i}", "request": "q", "response": "fine"} for i in range(5)]
    async with running(settings, RulesMonitor()):
        await produce(settings.kafka_bootstrap, settings.input_topic,
                      [(f"r{i}".encode(), json.dumps(b).encode(), headers)
                       for i, b in enumerate(bodies)])
        verdicts = await consume(settings.kafka_bootstrap, settings.verdict_topic, 5)
        await asyncio.sleep(1.0)
        written = await consume(settings.kafka_bootstrap, elsewhere, 1, timeout=1.0)
        more = await consume(settings.kafka_bootstrap, settings.verdict_topic, 6, timeout=1.0)
    assert written == []
    assert len(verdicts) == len(more) == 5  # and only verdicts in the verdict topic
    assert all(json.loads(r.value)["trajectory_id"] for r in more)


class Bloated:
    """Fails with a reason too long for any verdict, or judges with quotes of the input."""

    card = card("bloated")

    async def judge(self, trajectory: Trajectory) -> Judgement:
        if trajectory.request == "FAIL":
            raise RuntimeError("x" * 20_000)
        return Judgement(score=0.9, rationale="r" * 3000)


async def test_a_verdict_too_large_for_the_broker_is_cut_or_dead_lettered(
    settings: GatewaySettings,
) -> None:
    settings = settings.model_copy(update={"max_publish_bytes": 8192, "monitor_retries": 0})
    big = {"id": "big", "request": "q", "response": "fine", "metadata": {"blob": "m" * 50_000}}
    fail = {"id": "fail", "request": "FAIL", "response": "fine"}
    after = [{"id": f"ok{i}", "request": "q", "response": "fine"} for i in range(20)]
    records: list[Record] = [(b"same", json.dumps(t).encode(), []) for t in (big, fail, *after)]
    async with running(settings, Bloated()) as gateway:
        await produce(settings.kafka_bootstrap, settings.input_topic, records)
        verdicts, letters, positions = await outcomes(settings, 21, 1)
        cut = gateway.registry.get_sample_value("monitor_gateway_verdicts_cut_total",
                                                {"outcome": "cut"})

    by_id = {json.loads(r.value)["trajectory_id"]: json.loads(r.value) for r in verdicts}
    assert by_id["big"]["cut"] == ["metadata"] and by_id["big"]["metadata"] == {}
    assert by_id["big"]["rationale"] == "r" * 3000 and by_id["big"]["flagged"] is True
    assert by_id["ok0"]["cut"] is None and by_id["ok0"]["metadata"] == {}
    [letter] = [json.loads(r.value) for r in letters]
    assert letter["error"] == "verdict_too_large" and "'fail'" in letter["detail"]
    assert "fail" not in by_id
    assert sum(p or 0 for p in positions.values()) == len(records)  # the partition moved on
    assert cut == 1


async def test_a_fault_of_ours_is_loud_and_the_record_still_ends(
    settings: GatewaySettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import monitor_gateway.pipeline as pipeline_module
    from monitor_gateway.ingest import parse_trajectory as real

    def broken(value: bytes | None, max_bytes: int) -> object:
        if value and b"POISON" in value:
            raise RuntimeError("parser exploded")
        return real(value, max_bytes)

    monkeypatch.setattr(pipeline_module, "parse_trajectory", broken)
    records: list[Record] = [(f"k{i}".encode(), json.dumps(
        {"id": f"k{i}", "request": "POISON" if i == 3 else "q", "response": "a"}).encode(), [])
        for i in range(10)]
    async with running(settings, RulesMonitor()) as gateway:
        await produce(settings.kafka_bootstrap, settings.input_topic, records)
        verdicts, letters, positions = await outcomes(settings, 9, 1)
        faults = gateway.registry.get_sample_value("monitor_gateway_internal_errors_total")
        healthy, alive = await gateway.healthy(), gateway.alive()

        gateway._stuck.add(gateway.tracker.start(  # a record a fault left with no outcome
            TopicPartition(settings.input_topic, 0), 10_000))
        assert not await gateway.healthy()
        assert not gateway.alive()  # its partition's commits wait for a restart

    [letter] = [json.loads(r.value) for r in letters]
    assert letter["error"] == "internal_error"
    assert letter["detail"] == "gateway error: RuntimeError: parser exploded"
    assert len(verdicts) == 9 and faults == 1 and healthy and alive
    assert sum(p or 0 for p in positions.values()) == 10


async def test_a_dead_commit_loop_is_unhealthy_until_it_is_back(
    settings: GatewaySettings,
) -> None:
    from monitor_gateway.embedded import free_port

    settings = settings.model_copy(update={"metrics_port": free_port(),
                                           "metrics_host": "127.0.0.1"})
    health = f"http://127.0.0.1:{settings.metrics_port}/health"
    async with running(settings, RulesMonitor()) as gateway:
        await produce(settings.kafka_bootstrap, settings.input_topic, [
            (b"a", json.dumps({"id": "a", "request": "q", "response": "x"}).encode(), [])])
        await consume(settings.kafka_bootstrap, settings.verdict_topic, 1)
        gateway.supervisor.restart_after = 1.0
        real = gateway.committer.commit
        calls = 0

        async def dies_once(only: object = None) -> None:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise RuntimeError("commit loop bug")
            await real()

        gateway.committer.commit = dies_once  # type: ignore[method-assign]
        seen = []
        async with aiohttp.ClientSession() as http:
            for _ in range(40):
                async with http.get(health) as response:
                    seen.append(response.status)
                if 503 in seen and seen[-1] == 204:
                    break
                await asyncio.sleep(0.1)
        await produce(settings.kafka_bootstrap, settings.input_topic, [
            (b"b", json.dumps({"id": "b", "request": "q", "response": "x"}).encode(), [])])
        await consume(settings.kafka_bootstrap, settings.verdict_topic, 2)
        await asyncio.sleep(0.5)
        positions = await committed(settings.kafka_bootstrap, settings.group_id,
                                    settings.input_topic)
        deaths = gateway.registry.get_sample_value("monitor_gateway_internal_errors_total")
    assert 503 in seen and seen[-1] == 204  # down while the loop was dead, then back
    assert sum(p or 0 for p in positions.values()) == 2  # and it commits again
    assert deaths == 1
