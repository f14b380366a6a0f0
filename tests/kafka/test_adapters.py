"""Adapters: a run of a framework becomes a trajectory on the input topic, and an adapter
never blocks the agent when Kafka is away."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import socket
import subprocess
import sys
import time
import uuid
from typing import Any

import pytest
from kafka_io import consume

from monitor_gateway.embedded import create_topics
from monitor_gateway.schema import RUN_MESSAGE, RunEnd, RunStart, RunStep, Trajectory
from monitor_gateway.settings import GatewaySettings

pytestmark = pytest.mark.kafka

# the scripted run every adapter sees: asked to free disk, the agent deletes the WAL
REQUEST = "Free disk on staging."
CALL = {"cmd": "sudo rm -rf /var/lib/postgresql/15/main/pg_wal"}
RESULT = "removed 188G"
ANSWER = "Done: 188G freed."


def received(settings: GatewaySettings, run_id: str) -> Trajectory:
    """The one trajectory on the input topic, checked to be the scripted run's."""
    (record,) = asyncio.run(consume(settings.kafka_bootstrap, settings.input_topic, 1))
    assert record.key.decode() == run_id
    return scripted(Trajectory.model_validate_json(record.value), run_id)


def received_ids(settings: GatewaySettings, count: int) -> list[str]:
    return [record.key.decode() for record in
            asyncio.run(consume(settings.kafka_bootstrap, settings.input_topic, count))]


def scripted(trajectory: Trajectory, run_id: str) -> Trajectory:
    """``trajectory``, checked to be the scripted run's."""
    assert trajectory.id == run_id
    assert trajectory.request == REQUEST
    assert trajectory.response == ANSWER
    assert [s.role for s in trajectory.steps] == ["assistant", "tool", "assistant"]
    assert trajectory.steps[0].content == "Clearing WAL."
    (tool_call,) = trajectory.steps[0].tool_calls
    arguments = tool_call.arguments
    assert (tool_call.name, json.loads(arguments) if isinstance(arguments, str) else arguments
            ) == ("bash", CALL)
    assert trajectory.steps[1].content == RESULT
    return trajectory


def test_a_trace_of_genai_spans_becomes_one_trajectory_with_its_tool_calls(
    settings: GatewaySettings,
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider

    from monitor_gateway.adapters.otel import TrajectorySpanProcessor
    from monitor_gateway.adapters.outbox import Outbox

    provider = TracerProvider()
    processor = TrajectorySpanProcessor(Outbox(settings))
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("a scripted agent framework")
    with tracer.start_as_current_span("invoke_agent ops", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "ops"}) as root:
        with tracer.start_as_current_span("chat model", attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([
                    {"role": "system", "parts": [{"type": "text", "content": "You are ops."}]},
                    {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                    {"type": "text", "content": "Clearing WAL."},
                    {"type": "tool_call", "id": "c1", "name": "bash", "arguments": CALL}]}])}):
            pass
        with tracer.start_as_current_span("execute_tool bash", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
                "gen_ai.tool.call.arguments": json.dumps(CALL),
                "gen_ai.tool.call.result": RESULT}):
            pass
        with tracer.start_as_current_span("chat model", attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                    {"type": "text", "content": ANSWER}]}])}):
            pass
    assert processor.force_flush(30_000)
    trajectory = received(settings, f"{root.get_span_context().trace_id:032x}")
    assert trajectory.metadata["agent"] == "ops"


def test_shutting_down_the_tracer_closes_the_outbox_its_processor_made(
    settings: GatewaySettings, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The processor's own outbox sends what it holds and ends its thread on shutdown; an
    outbox the caller passed in is the caller's to close."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider

    from monitor_gateway.adapters.otel import TrajectorySpanProcessor
    from monitor_gateway.adapters.outbox import Outbox

    monkeypatch.setenv("MONITOR_GATEWAY_KAFKA_BOOTSTRAP", settings.kafka_bootstrap)
    monkeypatch.setenv("MONITOR_GATEWAY_INPUT_TOPIC", settings.input_topic)
    shared = Outbox(settings)
    own, given = TrajectorySpanProcessor(), TrajectorySpanProcessor(shared)
    provider = TracerProvider()
    for processor in (own, given):
        provider.add_span_processor(processor)
    sent = Trajectory(id="before-shutdown", request="r", response="a")
    assert own.outbox.offer(sent)
    provider.shutdown()
    assert received_ids(settings, 1) == ["before-shutdown"]  # flushed first
    assert not own.outbox.offer(Trajectory(id="after", request="r", response="a"))
    assert shared.offer(Trajectory(id="still-open", request="r", response="a"))
    assert shared.flush(30) and shared.close()


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
def test_an_openai_agents_run_becomes_one_trajectory_with_its_tool_calls(
    settings: GatewaySettings, api: str,
) -> None:
    """A real Agents SDK run (Runner, function tool, tracing) against a scripted model
    behind either OpenAI API, through an HTTP transport that never leaves the process."""
    agents = pytest.importorskip("agents")
    from agents import function_tool
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from agents.models.openai_responses import OpenAIResponsesModel
    from openai import AsyncOpenAI

    from monitor_gateway.adapters.openai_agents import TrajectoryProcessor
    from monitor_gateway.adapters.outbox import Outbox

    try:
        import httpx2 as httpx
    except ImportError:  # openai before 3.x
        import httpx  # type: ignore[no-redef]

    def reply(first: bool) -> dict[str, Any]:
        """The scripted model: a tool call first, then the answer."""
        if api == "chat_completions":
            message: dict[str, Any] = {"role": "assistant", "content": ANSWER}
            if first:
                message = {"role": "assistant", "content": "Clearing WAL.", "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "bash", "arguments": json.dumps(CALL)}}]}
            return {"id": "r", "object": "chat.completion", "created": 0, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}
        output: list[dict[str, Any]] = [{
            "type": "message", "id": "m", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "annotations": [],
                         "text": "Clearing WAL." if first else ANSWER}]}]
        if first:
            output.append({"type": "function_call", "id": "f", "call_id": "c1",
                           "name": "bash", "arguments": json.dumps(CALL),
                           "status": "completed"})
        return {"id": "r", "object": "response", "created_at": 0, "model": "m",
                "status": "completed", "output": output, "parallel_tool_calls": True,
                "tool_choice": "auto", "tools": []}

    def model_server(request: httpx.Request) -> httpx.Response:
        sent = json.dumps(json.loads(request.content))
        return httpx.Response(200, json=reply(first=RESULT not in sent))

    @function_tool
    def bash(cmd: str) -> str:
        """Run a shell command."""
        return RESULT

    processor = TrajectoryProcessor(Outbox(settings))
    agents.set_trace_processors([processor])  # and not the SDK's exporter to OpenAI
    client = AsyncOpenAI(api_key="scripted", base_url="http://scripted.invalid/v1",
                         http_client=httpx.AsyncClient(transport=httpx.MockTransport(
                             model_server)))
    model_class = (OpenAIChatCompletionsModel if api == "chat_completions"
                   else OpenAIResponsesModel)
    agent = agents.Agent(name="ops", instructions="You are ops.", tools=[bash],
                         model=model_class(model="scripted", openai_client=client))
    with agents.trace("ops run") as trace:
        result = asyncio.run(agents.Runner.run(agent, REQUEST))
    assert result.final_output == ANSWER
    processor.force_flush()
    trajectory = received(settings, trace.trace_id)
    assert trajectory.metadata["workflow"] == "ops run"


def test_a_langgraph_run_becomes_one_trajectory_with_its_tool_calls(
    settings: GatewaySettings,
) -> None:
    """A real LangGraph graph (a model node, LangGraph's ToolNode) with LangChain's fake
    chat model scripted to call a tool and then answer."""
    pytest.importorskip("langgraph")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from monitor_gateway.adapters.langchain import TrajectoryCallbackHandler
    from monitor_gateway.adapters.outbox import Outbox

    @tool
    def bash(cmd: str) -> str:
        """Run a shell command."""
        return RESULT

    model = GenericFakeChatModel(messages=iter([
        AIMessage(content="Clearing WAL.", tool_calls=[{"name": "bash", "args": CALL,
                                                        "id": "c1"}]),
        AIMessage(content=ANSWER)]))
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode([bash]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")

    handler = TrajectoryCallbackHandler(Outbox(settings))
    run_id = "0190b3c4-0000-7000-8000-000000000001"
    config = RunnableConfig(callbacks=[handler], run_id=uuid.UUID(run_id))
    out = graph.compile().invoke({"messages": [HumanMessage(REQUEST)]}, config=config)
    assert out["messages"][-1].content == ANSWER
    assert handler.outbox.flush(30)
    received(settings, run_id)


def test_the_outbox_never_blocks_and_counts_what_it_drops_when_kafka_is_away(
    settings: GatewaySettings, caplog: pytest.LogCaptureFixture,
) -> None:
    """And ``close()`` ends its thread while it waits a minute to retry, instead of leaving
    it to retry for the rest of the process."""
    from monitor_gateway.adapters.outbox import Outbox

    # a broker that takes the connection and never answers: a producer that waited on it
    # would hang until its request timeout, far past the wait below
    with socket.create_server(("127.0.0.1", 0)) as silent, \
            caplog.at_level("WARNING", logger="monitor_gateway.adapters.outbox"):
        port = silent.getsockname()[1]
        outbox = Outbox(settings.model_copy(update={"kafka_bootstrap": f"127.0.0.1:{port}"}),
                        capacity=2, retry_after=60)
        agent = concurrent.futures.ThreadPoolExecutor(1)
        offers = agent.submit(lambda: [outbox.offer(Trajectory(id=f"t{i}", request="r",
                                                               response="a"))
                                       for i in range(5)])
        agent.shutdown(wait=False)
        offered = offers.result(timeout=10)  # the agent's thread never waits on Kafka
        assert offered == [True, True, False, False, False] and outbox.dropped == 3
        assert not outbox.flush(timeout=0.2)
        # the connection attempt gives up (CONNECT_TIMEOUT, 5 s): the thread waits to retry
        deadline = time.monotonic() + 15
        while "retrying in 60s" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "retrying in 60s" in caplog.text
        assert outbox.close(timeout=2)  # woken from its minute's wait
        assert not outbox.offer(Trajectory(id="late", request="r", response="a"))
        assert outbox.dropped == 4


def test_a_langchain_agent_written_as_a_loop_of_invokes_is_one_trajectory(
    settings: GatewaySettings,
) -> None:
    """The user's own loop: every ``model.invoke`` and ``tool.invoke`` is a top-level run
    of its own, grouped into one trajectory by the handler's ``agent_run()``."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import tool

    from monitor_gateway.adapters.langchain import TrajectoryCallbackHandler
    from monitor_gateway.adapters.outbox import Outbox

    @tool
    def bash(cmd: str) -> str:
        """Run a shell command."""
        return RESULT

    model = GenericFakeChatModel(messages=iter([
        AIMessage(content="Clearing WAL.", tool_calls=[{"name": "bash", "args": CALL,
                                                        "id": "c1"}]),
        AIMessage(content=ANSWER)]))
    handler = TrajectoryCallbackHandler(Outbox(settings))
    config = RunnableConfig(callbacks=[handler])
    with handler.agent_run() as run_id:
        messages: list[BaseMessage] = [HumanMessage(REQUEST)]
        while True:
            reply = model.invoke(messages, config=config)
            messages.append(reply)
            if not isinstance(reply, AIMessage) or not reply.tool_calls:
                break
            for call in reply.tool_calls:
                messages.append(ToolMessage(bash.invoke(call["args"], config=config),
                                            tool_call_id=call["id"]))
    assert handler.outbox.flush(30) and handler.outbox.sent == 1
    received(settings, str(run_id))


def scripted_model() -> Any:
    """An Agents SDK ``Model`` of the user's own (no OpenAI client, so no model spans): a
    tool call first, then, once the tool's result is in its input, the answer."""
    from agents import ModelResponse, Usage
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    def said(text: str) -> ResponseOutputMessage:
        return ResponseOutputMessage(
            id="m", type="message", role="assistant", status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])])

    class Scripted(Model):
        async def get_response(self, system_instructions: str | None, input: Any,
                               *args: Any, **kwargs: Any) -> ModelResponse:
            first = RESULT not in json.dumps(input, default=str)
            output: list[Any] = [said("Clearing WAL." if first else ANSWER)]
            if first:
                output.append(ResponseFunctionToolCall(
                    type="function_call", id="f", call_id="c1", name="bash",
                    arguments=json.dumps(CALL), status="completed"))
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return Scripted()


def test_an_openai_agents_run_with_its_own_model_keeps_its_request_through_the_hooks(
    settings: GatewaySettings, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A ``Model`` of the user's own records no model span: without the hooks the
    trajectory has no request and no response (sent, counted and warned about once), and
    with them it is whole."""
    agents = pytest.importorskip("agents")
    from agents import function_tool

    from monitor_gateway.adapters import run
    from monitor_gateway.adapters.openai_agents import TrajectoryProcessor
    from monitor_gateway.adapters.outbox import Outbox

    @function_tool
    def bash(cmd: str) -> str:
        """Run a shell command."""
        return RESULT

    processor = TrajectoryProcessor(Outbox(settings))
    agents.set_trace_processors([processor])
    agent = agents.Agent(name="ops", instructions="You are ops.", tools=[bash],
                         model=scripted_model())
    monkeypatch.setattr(run, "_warned", set())
    incomplete = run.INCOMPLETE.labels("openai-agents", "request")
    before = incomplete._value.get()
    with caplog.at_level("WARNING", logger="monitor_gateway.adapters.run"):
        for _ in range(2):  # without the hooks, twice: warned once, counted twice
            with agents.trace("ops run"):
                assert asyncio.run(agents.Runner.run(agent, REQUEST)).final_output == ANSWER
    warned = [r.getMessage() for r in caplog.records if "with no request" in r.getMessage()]
    assert len(warned) == 1 and "hooks=processor.hooks" in warned[0]
    assert incomplete._value.get() == before + 2
    assert processor.outbox.flush(30) and processor.outbox.sent == 2
    records = asyncio.run(consume(settings.kafka_bootstrap, settings.input_topic, 2))
    lost = [Trajectory.model_validate_json(r.value) for r in records]
    assert [(t.request, [s.role for s in t.steps]) for t in lost] == [("", ["tool"])] * 2

    fresh = settings.model_copy(update={"input_topic": f"{settings.input_topic}-hooked"})
    asyncio.run(create_topics(fresh, {fresh.input_topic: 1}))
    processor = TrajectoryProcessor(Outbox(fresh))
    agents.set_trace_processors([processor])
    with agents.trace("ops run") as trace:
        result = asyncio.run(agents.Runner.run(agent, REQUEST, hooks=processor.hooks))
    assert result.final_output == ANSWER
    processor.force_flush()
    received(fresh, trace.trace_id)


def streamed(settings: GatewaySettings, run_id: str) -> Trajectory:
    """The scripted run as an adapter sent it step by step: a start, each step, an end,
    in order and keyed by the run's id on the step topic; checked as ``received`` checks
    a trajectory sent whole."""
    records = asyncio.run(consume(settings.kafka_bootstrap, settings.step_topic, 5))
    messages = [RUN_MESSAGE.validate_json(r.value) for r in records]
    assert {r.key for r in records} == {run_id.encode()}
    assert [(m.type, m.seq) for m in messages] == [
        ("start", 0), ("step", 1), ("step", 2), ("step", 3), ("end", 4)]
    start, *steps, end = messages
    assert isinstance(start, RunStart) and isinstance(end, RunEnd)
    return scripted(Trajectory(id=start.trajectory_id, request=start.request,
                               response=end.response, metadata=start.metadata,
                               steps=[m.step for m in steps if isinstance(m, RunStep)]), run_id)


@pytest.fixture
def step_settings(settings: GatewaySettings) -> GatewaySettings:
    """The test's settings with a step topic of its own."""
    stepping = settings.model_copy(update={"step_topic": f"steps-{settings.group_id}"})
    asyncio.run(create_topics(stepping, {stepping.step_topic: 1}))
    return stepping


def test_each_adapter_can_send_a_run_step_by_step_as_it_happens(
        step_settings: GatewaySettings) -> None:
    """The LangChain handler, the Agents SDK hooks and the OpenTelemetry processor, each
    with ``steps=True``, on the scripted run."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import tool

    from monitor_gateway.adapters.langchain import TrajectoryCallbackHandler
    from monitor_gateway.adapters.outbox import Outbox

    settings = step_settings

    @tool
    def bash(cmd: str) -> str:
        """Run a shell command."""
        return RESULT

    model = GenericFakeChatModel(messages=iter([
        AIMessage(content="Clearing WAL.", tool_calls=[{"name": "bash", "args": CALL,
                                                        "id": "c1"}]),
        AIMessage(content=ANSWER)]))
    outbox = Outbox(settings)
    handler = TrajectoryCallbackHandler(outbox, steps=True)
    config = RunnableConfig(callbacks=[handler])
    with handler.agent_run() as run_id:
        messages: list[BaseMessage] = [HumanMessage(REQUEST)]
        reply = model.invoke(messages, config=config)
        assert outbox.flush(30) and outbox.sent == 2  # the start and the first step, now
        assert isinstance(reply, AIMessage)
        messages += [reply, ToolMessage(bash.invoke(reply.tool_calls[0]["args"],
                                                    config=config), tool_call_id="c1")]
        model.invoke(messages, config=config)
    assert outbox.flush(30) and outbox.sent == 5
    streamed(settings, str(run_id))


def test_the_agents_sdk_hooks_and_opentelemetry_can_send_step_by_step(
        step_settings: GatewaySettings) -> None:
    agents = pytest.importorskip("agents")
    from agents import function_tool
    from opentelemetry.sdk.trace import TracerProvider

    from monitor_gateway.adapters.openai_agents import TrajectoryProcessor
    from monitor_gateway.adapters.otel import TrajectorySpanProcessor
    from monitor_gateway.adapters.outbox import Outbox

    @function_tool
    def bash(cmd: str) -> str:
        """Run a shell command."""
        return RESULT

    processor = TrajectoryProcessor(Outbox(step_settings), steps=True)
    agents.set_trace_processors([processor])
    agent = agents.Agent(name="ops", instructions="You are ops.", tools=[bash],
                         model=scripted_model())
    with agents.trace("ops run") as trace:
        result = asyncio.run(agents.Runner.run(agent, REQUEST, hooks=processor.hooks))
    assert result.final_output == ANSWER
    processor.force_flush()
    assert streamed(step_settings, trace.trace_id).metadata["workflow"] == "ops run"

    fresh = step_settings.model_copy(update={"step_topic": f"{step_settings.step_topic}-otel"})
    asyncio.run(create_topics(fresh, {fresh.step_topic: 1}))
    provider = TracerProvider()
    spans = TrajectorySpanProcessor(Outbox(fresh), steps=True)
    provider.add_span_processor(spans)
    tracer = provider.get_tracer("a scripted agent framework")
    with tracer.start_as_current_span("invoke_agent ops") as root:
        with tracer.start_as_current_span("chat model", attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps([
                    {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                    {"type": "text", "content": "Clearing WAL."},
                    {"type": "tool_call", "id": "c1", "name": "bash", "arguments": CALL}]}])}):
            pass
        with tracer.start_as_current_span("execute_tool bash", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": RESULT}):
            pass
        assert spans.force_flush(30_000) and spans.outbox.sent == 3  # before the run ends
        with tracer.start_as_current_span("chat model", attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                    {"type": "text", "content": ANSWER}]}])}):
            pass
    assert spans.force_flush(30_000)
    streamed(fresh, f"{root.get_span_context().trace_id:032x}")


# a script that queues one trajectory and exits at once, never flushing nor closing
QUEUED_AT_EXIT = """
import sys
from monitor_gateway.adapters.outbox import Outbox
from monitor_gateway.schema import Trajectory
from monitor_gateway.settings import KafkaSettings

outbox = Outbox(KafkaSettings(kafka_bootstrap=sys.argv[1], input_topic=sys.argv[2]),
                exit_wait=float(sys.argv[3]))
outbox.offer(Trajectory(id="last-run", request="r", response="a"))
"""


def test_a_script_that_exits_straight_after_its_run_still_sends_it(
        settings: GatewaySettings) -> None:
    """The outbox's thread is a daemon: without the outbox's exit hook, the trajectory a
    script queued just before it ended would die with it."""
    subprocess.run([sys.executable, "-c", QUEUED_AT_EXIT, settings.kafka_bootstrap,
                    settings.input_topic, "30"], check=True, timeout=60)
    assert received_ids(settings, 1) == ["last-run"]


def test_at_exit_an_outbox_waits_for_an_absent_broker_only_so_long_and_says_so() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", QUEUED_AT_EXIT,
                               f"127.0.0.1:{silent.getsockname()[1]}", "t", "0.5"],
                              capture_output=True, text=True, check=True, timeout=60)
    assert time.monotonic() - started < 15  # not the producer's request timeout
    assert "1 trajectories or run messages still unsent after 0.5s at exit" in done.stderr
