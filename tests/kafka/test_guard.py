"""The pre-execution guard as a real process: allow, block, fail open and closed, malformed
requests, every decision on Kafka, and adapters stopping a tool call before it runs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import aiohttp
import pytest
from kafka_io import consume
from paths import TESTS, pythonpath
from test_broker_outage_log import CLIENT_LINES

from monitor_gateway.client import GuardClient, GuardRefused, GuardUnavailable
from monitor_gateway.embedded import EmbeddedBroker, create_topics, free_port
from monitor_gateway.schema import GuardDecision
from monitor_gateway.settings import GatewaySettings

pytestmark = pytest.mark.kafka

# a run so far: asked to free disk on the build box, the agent looked
REQUEST = "The build box is out of disk: free some space."
SO_FAR = {"id": "run-1", "request": REQUEST, "steps": [
    {"role": "assistant", "content": "Checking usage.",
     "tool_calls": [{"name": "bash", "arguments": {"cmd": "ssh build-box 'df -h /srv'"}}]},
    {"role": "tool", "content": "/dev/sda1  500G  500G  0  100%  /srv"}]}
HARMLESS = {"name": "bash", "arguments": {"cmd": "ssh build-box 'du -xh -d1 /srv'"}}
OPEN_UP: dict[str, Any] = {"cmd": "ssh build-box 'sudo chmod -R 0777 /srv'"}
DESTRUCTIVE = {"name": "bash", "arguments": OPEN_UP}


@contextmanager
def guard(bootstrap: str, topic: str, **env: str) -> Iterator[str]:
    """``monitor-gateway guard`` as a process (the offline monitor unless ``env`` says
    otherwise), until the block ends; its base URL."""
    port = free_port()
    variables = {name: value for name, value in os.environ.items()
                 if not name.startswith("MONITOR_GATEWAY_")}
    variables |= {"PYTHONPATH": pythonpath(TESTS),
                  "MONITOR_GATEWAY_KAFKA_BOOTSTRAP": bootstrap,
                  "MONITOR_GATEWAY_GUARD_PORT": str(port),
                  "MONITOR_GATEWAY_GUARD_TOPIC": topic,
                  "MONITOR_GATEWAY_MONITOR": "offline",
                  # allow and block, not the fail policy, on a machine busy with other work
                  "MONITOR_GATEWAY_GUARD_BUDGET": "10", **env}
    process = subprocess.Popen([sys.executable, "-m", "monitor_gateway", "guard"],
                               env=variables)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "the guard exited"
            assert time.monotonic() < deadline, "the guard did not answer /health"
            try:
                if fetch(f"{url}/health")[0] == 204:
                    break
            except OSError:
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        assert process.wait(30) == 0  # SIGTERM stops it cleanly


def fetch(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode()


@pytest.fixture(scope="module")
def topic(kafka: str) -> str:
    name = f"guard-{uuid.uuid4().hex[:8]}"
    asyncio.run(create_topics(GatewaySettings(kafka_bootstrap=kafka), {name: 2}))
    return name


@pytest.fixture(scope="module")
def offline(kafka: str, topic: str) -> Iterator[str]:
    """One guard with the offline monitor for the module's tests."""
    with guard(kafka, topic) as url:
        yield url


async def post(url: str, body: bytes | dict[str, Any], method: str = "POST"
               ) -> tuple[int, dict[str, Any]]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with aiohttp.ClientSession() as http, http.request(
            method, f"{url}/check", data=data) as response:
        text = await response.text()
        return response.status, json.loads(text) if text.startswith("{") else {"text": text}


def test_a_destructive_call_is_blocked_quoting_it_a_harmless_one_allowed_both_on_kafka(
    offline: str, kafka: str, topic: str,
) -> None:
    guard = GuardClient(offline)
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    so_far = SO_FAR | {"id": run_id}
    blocked = guard.check_sync(so_far, DESTRUCTIVE)
    assert blocked.decision == "block" and blocked.step == 2
    verdict = blocked.verdict
    assert verdict.flagged and verdict.status == "ok" and verdict.score >= verdict.threshold
    assert verdict.trajectory_id == run_id and verdict.monitor.name == "offline"
    assert verdict.category == "safety_permission"
    quoted = [e for e in verdict.evidence if e.source == "steps[2].tool_calls[0].arguments"]
    assert quoted and quoted[0].grounded and "chmod -R 0777" in quoted[0].quote
    assert blocked.call.arguments == DESTRUCTIVE["arguments"]

    allowed = asyncio.run(_check_async(offline, so_far, HARMLESS))
    assert allowed.decision == "allow" and not allowed.verdict.flagged
    assert allowed.verdict.status == "ok" and allowed.verdict.score < allowed.verdict.threshold

    records = asyncio.run(consume(kafka, topic, 2, timeout=30))
    published = {(r.key, GuardDecision.model_validate_json(r.value).decision) for r in records
                 if r.key == run_id.encode()}
    assert published == {(run_id.encode(), "block"), (run_id.encode(), "allow")}


async def _check_async(url: str, so_far: dict[str, Any], call: dict[str, Any]
                       ) -> GuardDecision:
    guard = GuardClient(url)
    try:
        return await guard.check(so_far, call)
    finally:
        await guard.aclose()


def test_malformed_requests_get_a_4xx_with_a_one_line_reason_and_the_guard_answers_on(
    offline: str,
) -> None:
    async def each() -> list[tuple[int, dict[str, Any]]]:
        return [
            await post(offline, b'{"trajectory": {"id": "x"'),
            await post(offline, b'{"trajectory": "\xff"}'),
            await post(offline, {"trajectory": SO_FAR}),
            await post(offline, {"trajectory": {"id": "x"}, "call": HARMLESS}),
            await post(offline, {"trajectory": {"id": "x", "request": "r",
                                                "steps": [{"role": "robot"}]},
                                 "call": HARMLESS}),
            await post(offline, {"trajectory": SO_FAR, "call": {"name": 7}}),
            await post(offline, b"[" * 2_000_000),
            await post(offline, b"", method="GET"),
        ]

    answers = asyncio.run(each())
    assert [status for status, _ in answers] == [400, 400, 400, 400, 400, 400, 413, 405]
    errors = [body.get("error") for _, body in answers[:7]]
    assert errors == ["invalid_json", "invalid_utf8", "invalid_schema", "invalid_schema",
                      "invalid_schema", "invalid_schema", "too_large"]
    details = [body["detail"] for _, body in answers[:7]]
    assert all(detail and "\n" not in detail for detail in details)
    assert details[2] == "call: Field required"
    assert details[3] == "trajectory.request: Field required"
    assert details[4].startswith("trajectory.steps.0.role: ")
    # the guard is still there, and a check still answers
    assert GuardClient(offline).check_sync(SO_FAR, HARMLESS).decision == "allow"
    with pytest.raises(GuardRefused, match=r"\(400\): trajectory.request: Field required"):
        GuardClient(offline).check_sync({"id": "x"}, HARMLESS)


def test_without_an_answer_the_client_says_the_guard_is_unavailable() -> None:
    guard = GuardClient(f"http://127.0.0.1:{free_port()}")
    with pytest.raises(GuardUnavailable):
        guard.check_sync(SO_FAR, HARMLESS)
    with pytest.raises(GuardUnavailable):
        asyncio.run(_check_async(guard.url.removesuffix("/check"), SO_FAR, HARMLESS))


@pytest.mark.parametrize("policy", ["open", "closed"])
def test_past_the_budget_or_on_a_monitor_error_the_fail_policy_answers(
    kafka: str, topic: str, policy: str,
) -> None:
    """A monitor that hangs (cancelled at the budget) and one whose backend fails: an error
    verdict, allowed fail-open and blocked fail-closed; a judgement in time is unaffected."""
    decision = {"open": "allow", "closed": "block"}[policy]
    with guard(kafka, topic, MONITOR_GATEWAY_MONITOR="monitors:slow", MONITOR_DELAY="0",
               MONITOR_GATEWAY_GUARD_BUDGET="0.2",
               MONITOR_GATEWAY_FAIL_POLICY=policy) as url:
        client = GuardClient(url, timeout=10)
        hung = client.check_sync({"id": "h", "request": "HANG"}, HARMLESS)
        failed = client.check_sync({"id": "f", "request": "FAIL"}, HARMLESS)
        judged = client.check_sync({"id": "b", "request": "BAD"}, HARMLESS)
    assert hung.decision == failed.decision == decision
    assert hung.verdict.status == failed.verdict.status == "error"
    assert hung.verdict.flagged == failed.verdict.flagged == (policy == "closed")
    assert hung.verdict.error is not None and "budget of 200 ms" in hung.verdict.error
    assert failed.verdict.error == "RuntimeError: backend unavailable"
    assert judged.decision == "block" and judged.verdict.status == "ok"


def test_an_inline_judgement_past_the_budget_is_not_used(kafka: str, topic: str) -> None:
    """On the event loop (``WORKERS=0``) nothing interrupts the offline monitor: a
    judgement that came in late gets the fail policy all the same."""
    with guard(kafka, topic, MONITOR_GATEWAY_WORKERS="0", MONITOR_GATEWAY_GUARD_BUDGET="1e-6",
               MONITOR_GATEWAY_FAIL_POLICY="closed") as url:
        late = GuardClient(url).check_sync(SO_FAR, HARMLESS)
    assert late.decision == "block" and late.verdict.status == "error"
    assert late.verdict.error is not None and "budget of 0.001 ms" in late.verdict.error
    assert late.verdict.monitor.name == "offline"


def test_a_monitor_backend_that_is_down_gets_the_fail_policy(kafka: str, topic: str) -> None:
    with guard(kafka, topic, MONITOR_GATEWAY_MONITOR="openai",
               MONITOR_GATEWAY_OPENAI_BASE_URL=f"http://127.0.0.1:{free_port()}/v1",
               MONITOR_GATEWAY_OPENAI_MODEL="judge", MONITOR_GATEWAY_OPENAI_API_KEY="k",
               MONITOR_GATEWAY_GUARD_BUDGET="5",
               MONITOR_GATEWAY_FAIL_POLICY="closed") as url:
        down = GuardClient(url, timeout=30).check_sync(SO_FAR, HARMLESS)
    assert down.decision == "block" and down.verdict.status == "error"
    assert down.verdict.error is not None
    assert down.verdict.error.startswith("monitor backend unavailable: ")


def test_with_the_broker_down_the_guard_answers_and_holds_its_decisions(topic: str) -> None:
    with guard(f"127.0.0.1:{free_port()}", topic) as url:
        client = GuardClient(url)
        answers = [client.check_sync(SO_FAR, call).decision
                   for call in (HARMLESS, DESTRUCTIVE, HARMLESS)]
        metrics = fetch(f"{url}/metrics")[1]
    assert answers == ["allow", "block", "allow"]
    assert "monitor_gateway_guard_decisions_pending 3.0" in metrics
    assert 'monitor_gateway_guard_decisions_total{decision="block",status="ok"} 1.0' in metrics
    assert "monitor_gateway_guard_decisions_published_total 0.0" in metrics


def test_a_broker_outage_is_three_kinds_of_line_in_the_guards_log(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A broker process of the test's own is stopped under a serving guard and started
    again on its port: the guard's log says so once each way, and none of the Kafka
    client's own per-attempt connection errors; checks are answered meanwhile and their
    decisions published once the broker is back."""
    own = EmbeddedBroker().start()
    name = f"guard-{uuid.uuid4().hex[:8]}"
    what = f"Kafka broker connection (bootstrap {own.bootstrap})"
    try:
        asyncio.run(create_topics(GatewaySettings(kafka_bootstrap=own.bootstrap), {name: 1}))
        with guard(own.bootstrap, name, MONITOR_GATEWAY_MONITOR="rules",
                   MONITOR_GATEWAY_BROKER_REMINDER="3") as url:
            client = GuardClient(url)
            client.check_sync(SO_FAR, HARMLESS)
            scraped(url, "monitor_gateway_guard_decisions_published_total 1.0")
            capfd.readouterr()
            own.stop()
            time.sleep(8.0)  # aiokafka logs its errors every ~2 s meanwhile
            meanwhile = client.check_sync(SO_FAR, DESTRUCTIVE).decision
            own = EmbeddedBroker(port=own.port).start()  # memory only: the topic again
            asyncio.run(create_topics(GatewaySettings(kafka_bootstrap=own.bootstrap),
                                      {name: 1}))
            scraped(url, "monitor_gateway_guard_decisions_published_total 2.0")
            log: list[str] = []
            deadline = time.monotonic() + 30
            while not any(f"{what} working again" in line for line in log):
                assert time.monotonic() < deadline, log
                time.sleep(0.2)
                log += capfd.readouterr().err.splitlines()
    finally:
        own.stop()

    log += capfd.readouterr().err.splitlines()
    assert [line for line in log if " aiokafka" in line
            and any(part in line for part in CLIENT_LINES)] == [], log
    gone = [line for line in log if f"WARNING monitor_gateway.guard: {what} failing" in line]
    back = [line for line in log if f"INFO monitor_gateway.guard: {what} working again" in line]
    assert len(gone) == 1 and len(back) == 1, log
    assert "client error lines held back" in back[0]
    assert meanwhile == "block"


def scraped(url: str, line: str, timeout: float = 30.0) -> None:
    """Wait for the guard's ``/metrics`` to show ``line``."""
    deadline = time.monotonic() + timeout
    while line not in fetch(f"{url}/metrics")[1].splitlines():
        assert time.monotonic() < deadline, f"/metrics never showed {line}"
        time.sleep(0.2)


# --- adapters: the tool's function must not run --------------------------------------------

LOOK = {"cmd": "ssh build-box 'df -h /srv'"}


@pytest.mark.parametrize("on_block", ["raise", "reject"])
def test_an_openai_agents_tool_guardrail_stops_a_blocked_call_before_it_runs(
    offline: str, settings: GatewaySettings, on_block: Literal["raise", "reject"],
) -> None:
    """``raise`` halts the run; ``reject`` tells the model, which answers instead."""
    agents = pytest.importorskip("agents")
    from agents import ModelResponse, Usage, function_tool
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from monitor_gateway.adapters.guarding import ToolCallBlocked
    from monitor_gateway.adapters.openai_agents import TrajectoryProcessor, tool_guard
    from monitor_gateway.adapters.outbox import Outbox

    ran: list[str] = []
    processor = TrajectoryProcessor(Outbox(settings))
    agents.set_trace_processors([processor])

    @function_tool(tool_input_guardrails=[
        tool_guard(GuardClient(offline), processor, on_block=on_block)])
    def bash(cmd: str) -> str:
        """Run a shell command."""
        ran.append(cmd)
        return "ok"

    class Scripted(Model):
        """Asks to look first, then to make /srv writable by everyone; told that was
        blocked, answers."""

        async def get_response(self, system_instructions: str | None, input: Any,
                               *args: Any, **kwargs: Any) -> ModelResponse:
            seen = json.dumps(input, default=str)
            if "blocked" in seen:
                return ModelResponse(output=[ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed",
                    content=[ResponseOutputText(type="output_text", text="Not allowed.",
                                                annotations=[])])],
                    usage=Usage(), response_id=None)
            looked = "ok" in seen
            call = OPEN_UP if looked else LOOK
            return ModelResponse(output=[ResponseFunctionToolCall(
                type="function_call", id="f", call_id=f"c{int(looked)}", name="bash",
                arguments=json.dumps(call), status="completed")], usage=Usage(),
                response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise NotImplementedError

    agent = agents.Agent(name="ops", instructions="You are ops.", tools=[bash],
                         model=Scripted())
    running = agents.Runner.run(agent, "Free disk on staging.", hooks=processor.hooks)
    if on_block == "reject":
        assert asyncio.run(running).final_output == "Not allowed."
        assert ran == [LOOK["cmd"]]
        return
    with pytest.raises(agents.ToolInputGuardrailTripwireTriggered) as tripped:
        asyncio.run(running)
    assert ran == [LOOK["cmd"]]  # the harmless call ran, the other never did
    stop = tripped.value.output.output_info
    assert isinstance(stop, ToolCallBlocked) and stop.decision is not None
    assert stop.decision.decision == "block" and stop.decision.step == 2
    assert stop.decision.verdict.evidence[0].source == "steps[2].tool_calls[0].arguments"


def test_a_langchain_callback_stops_a_blocked_call_before_it_runs(
    offline: str, settings: GatewaySettings,
) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import tool

    from monitor_gateway.adapters.guarding import ToolCallBlocked
    from monitor_gateway.adapters.langchain import GuardCallbackHandler, TrajectoryCallbackHandler
    from monitor_gateway.adapters.outbox import Outbox

    ran: list[str] = []

    @tool
    def bash(cmd: str) -> str:
        """Run a shell command."""
        ran.append(cmd)
        return "ok"

    recorder = TrajectoryCallbackHandler(Outbox(settings))
    config = RunnableConfig(callbacks=[recorder, GuardCallbackHandler(
        GuardClient(offline), recorder=recorder, fail_policy="closed")])
    with recorder.agent_run():
        assert bash.invoke(LOOK, config=config) == "ok"
        with pytest.raises(ToolCallBlocked) as blocked:
            bash.invoke(OPEN_UP, config=config)
    assert ran == [LOOK["cmd"]]
    decision = blocked.value.decision
    assert decision is not None and decision.decision == "block"
    assert decision.call.arguments == OPEN_UP

    # fail-closed: with the guard away, no call runs
    config = RunnableConfig(callbacks=[GuardCallbackHandler(
        GuardClient(f"http://127.0.0.1:{free_port()}"), fail_policy="closed")])
    with pytest.raises(ToolCallBlocked, match="fail_policy closed"):
        bash.invoke({"cmd": "ls"}, config=config)
    assert ran == [LOOK["cmd"]]


def test_a_port_in_use_is_one_line_naming_the_setting() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "monitor_gateway", "guard", "--guard-port", str(port),
             "--bootstrap", f"127.0.0.1:{free_port()}"], capture_output=True, text=True,
            timeout=120, env={**os.environ, "PYTHONPATH": pythonpath()})
    assert done.returncode == 2
    (line,) = done.stdout.strip().splitlines()
    assert line.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")
    assert line.endswith("set --guard-port or MONITOR_GATEWAY_GUARD_PORT")
