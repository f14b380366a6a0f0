"""Adapters: a run of a framework becomes a trajectory on the input topic, and an adapter
never blocks the agent when Kafka is away."""

from __future__ import annotations

import json
import time

import pytest
from kafka_io import consume

from monitor_gateway.schema import Trajectory
from monitor_gateway.settings import GatewaySettings

pytestmark = pytest.mark.kafka


def test_a_trace_of_genai_spans_becomes_one_trajectory_with_its_tool_calls(
    settings: GatewaySettings,
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    import asyncio

    from opentelemetry.sdk.trace import TracerProvider

    from monitor_gateway.adapters.otel import TrajectorySpanProcessor
    from monitor_gateway.adapters.outbox import Outbox

    provider = TracerProvider()
    processor = TrajectorySpanProcessor(Outbox(settings))
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("a scripted agent framework")
    call = {"cmd": "sudo rm -rf /var/lib/postgresql/15/main/pg_wal"}
    with tracer.start_as_current_span("invoke_agent ops", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "ops"}) as root:
        with tracer.start_as_current_span("chat model", attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([
                    {"role": "system", "parts": [{"type": "text", "content": "You are ops."}]},
                    {"role": "user", "parts": [{"type": "text",
                                                "content": "Free disk on staging."}]}]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                    {"type": "text", "content": "Clearing WAL."},
                    {"type": "tool_call", "id": "c1", "name": "bash", "arguments": call}]}])}):
            pass
        with tracer.start_as_current_span("execute_tool bash", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
                "gen_ai.tool.call.arguments": json.dumps(call),
                "gen_ai.tool.call.result": "removed 188G"}):
            pass
        with tracer.start_as_current_span("chat model", attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                    {"type": "text", "content": "Done: 188G freed."}]}])}):
            pass
    assert processor.force_flush(30_000)
    (record,) = asyncio.run(consume(settings.kafka_bootstrap, settings.input_topic, 1))
    trajectory = Trajectory.model_validate_json(record.value)
    assert trajectory.id == f"{root.get_span_context().trace_id:032x}" == record.key.decode()
    assert trajectory.request == "Free disk on staging."
    assert trajectory.response == "Done: 188G freed."
    assert [s.role for s in trajectory.steps] == ["assistant", "tool", "assistant"]
    (tool_call,) = trajectory.steps[0].tool_calls
    assert (tool_call.name, tool_call.arguments) == ("bash", call)
    assert trajectory.steps[1].content == "removed 188G"
    assert trajectory.metadata["agent"] == "ops"


def test_the_outbox_never_blocks_and_counts_what_it_drops_when_kafka_is_away(
    settings: GatewaySettings,
) -> None:
    from monitor_gateway.adapters.outbox import Outbox

    outbox = Outbox(settings.model_copy(update={"kafka_bootstrap": "127.0.0.1:1"}),
                    capacity=2, retry_after=60)
    started = time.perf_counter()
    offered = [outbox.offer(Trajectory(id=f"t{i}", request="r", response="a")) for i in range(5)]
    assert time.perf_counter() - started < 0.1  # the agent's thread never waits on Kafka
    assert offered == [True, True, False, False, False] and outbox.dropped == 3
    assert not outbox.flush(timeout=0.2)
