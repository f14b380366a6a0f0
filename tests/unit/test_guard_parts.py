"""The guard's pure parts: reading a request, the run so far an adapter sends, and a
decision made to fit the broker's message size."""

from __future__ import annotations

import asyncio
import json
from itertools import pairwise

import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import CollectorRegistry

from monitor_gateway.adapters.guarding import run_so_far
from monitor_gateway.adapters.run import Run
from monitor_gateway.guard import DecisionLog, Guard, GuardMetrics, application, read_request
from monitor_gateway.ingest import Rejection
from monitor_gateway.monitors.rules import RulesMonitor
from monitor_gateway.policy import Policy
from monitor_gateway.publish import Publisher
from monitor_gateway.schema import GuardDecision, MonitorCard, ToolCall, Verdict, utcnow
from monitor_gateway.settings import GuardSettings

CALL = {"name": "bash", "arguments": {"cmd": "rm -rf build"}}


def test_a_request_is_the_run_with_the_call_appended_as_its_last_step() -> None:
    body = json.dumps({"trajectory": {"id": "r", "request": "Clean up.", "steps": [
        {"role": "tool", "content": "built"}]}, "call": CALL}).encode()
    read = read_request(body, 10_000)
    assert not isinstance(read, Rejection)
    request, judged = read
    assert [s.role for s in judged.steps] == ["tool", "assistant"]
    assert judged.steps[-1].tool_calls == [request.call] and judged.response == ""


def test_what_is_no_request_is_named_from_the_body_root() -> None:
    def reason(body: bytes) -> tuple[str, str]:
        read = read_request(body, 200)
        assert isinstance(read, Rejection)
        return read.error, read.detail

    assert reason(b"{")[0] == "invalid_json"
    assert reason(b"\xff")[0] == "invalid_utf8"
    assert reason(b"x" * 201) == ("too_large", "201 bytes is over the limit of 200")
    assert reason(json.dumps({"trajectory": {"id": "r", "request": "q", "steps": "no"},
                              "call": CALL}).encode()) == (
        "invalid_schema", "trajectory.steps: Input should be a valid list")
    assert reason(json.dumps({"trajectory": {"request": "q"}, "call": CALL}).encode()) == (
        "invalid_schema", "trajectory.id: Field required")


def test_the_run_so_far_leaves_out_the_call_the_framework_recorded_already() -> None:
    call = ToolCall.model_validate(CALL)
    run = Run()
    run.asked("Clean up.")
    run.said("Looking.", [("bash", {"cmd": "ls"})])
    run.answered("build/")
    run.said("", [("bash", '{"cmd": "rm -rf build"}')])  # a JSON string, as OpenAI sends
    sent = run_so_far(run, "r", ToolCall(name="bash", arguments='{"cmd": "rm -rf build"}'))
    assert [s["role"] for s in sent["steps"]] == ["assistant", "tool"]
    assert sent["request"] == "Clean up." and sent["id"] == "r"

    run.said("Cleaning.", [("bash", CALL["arguments"]), ("bash", {"cmd": "ls"})])
    sent = run_so_far(run, "r", call)  # the text stays, and the other call
    assert sent["steps"][-1] == {"role": "assistant", "content": "Cleaning.",
                                 "tool_calls": [{"name": "bash", "arguments": {"cmd": "ls"}}]}
    assert run_so_far(None, "r", call) == {"id": "r", "request": ""}


def test_a_decision_too_large_for_the_broker_is_cut_until_it_fits() -> None:
    card = MonitorCard(name="m", backend="test", version="1", label="m")
    huge = "x" * 100_000
    verdict = Verdict(trajectory_id="r", flagged=True, score=1.0, threshold=0.5, monitor=card,
                      rationale=huge, received_at=utcnow(), decided_at=utcnow(),
                      latency_ms={"monitor": 1.0, "gateway": 1.0})
    decision = GuardDecision(decision="block", step=0, verdict=verdict,
                             call=ToolCall(name="bash", arguments={"cmd": huge}))
    log = DecisionLog(GuardSettings(), GuardMetrics(CollectorRegistry()))
    message = log._message(decision)
    sizes = [len(message.value)]
    while len(message.value) > 1000:
        assert message.smaller is not None
        smaller = message.smaller()
        assert smaller is not None
        message = smaller
        sizes.append(len(message.value))
    assert all(a > b for a, b in pairwise(sizes)) and len(sizes) <= 6
    cut = GuardDecision.model_validate_json(message.value)
    assert cut.call.arguments == {} and cut.verdict.cut is not None
    assert {"rationale", "call.arguments"} <= set(cut.verdict.cut) and cut.decision == "block"
    assert cut.verdict.score == 1.0 and cut.verdict.flagged


async def test_live_says_503_once_the_decisions_are_no_longer_published(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fault the decision log cannot recover from (not a broker outage: that it waits
    out) stops its task: the guard goes on answering and stays ready, and ``/live`` tells
    the orchestrator to restart it."""
    broken = asyncio.Event()

    async def fails(_: object) -> None:
        await broken.wait()
        raise RuntimeError("a bug in publishing")

    monkeypatch.setattr(Publisher, "start", fails)
    settings = GuardSettings()
    metrics = GuardMetrics(CollectorRegistry())
    decisions = DecisionLog(settings, metrics)
    guard = Guard(settings, RulesMonitor(), Policy(default=0.5), metrics, decisions)
    async with TestClient(TestServer(application(guard))) as http:
        decisions.start()
        assert [(await http.get(path)).status for path in ("/health", "/live")] == [204, 204]
        broken.set()
        for _ in range(500):  # the task ends once it runs again: a loop turn or a few
            if not decisions.running:
                break
            await asyncio.sleep(0.01)
        answer = await http.get("/live")
        assert (answer.status, await answer.text()) == (
            503, "guard decisions are not being published\n")
        assert (await http.get("/health")).status == 204
        checked = await http.post("/check", json={
            "trajectory": {"id": "r", "request": "Free disk."},
            "call": {"name": "bash", "arguments": {"cmd": "ls"}}})
        assert checked.status == 200 and (await checked.json())["decision"] == "allow"
    await decisions.stop(0)
