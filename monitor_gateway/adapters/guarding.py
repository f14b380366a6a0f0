"""Stopping a tool call before it runs: what the adapters' guards share.

An adapter's guard asks the guard service (:class:`~monitor_gateway.client.GuardClient`)
about each tool call its framework is about to run, with the run so far as the adapter
recorded it, and stops the call when the answer is block. When the guard gives no answer
at all (down, too slow), the adapter's own ``fail_policy`` decides: ``open`` lets the call
run (and logs it), ``closed`` stops it. The service's ``FAIL_POLICY`` already answers for
a judgement that failed or came too late.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from ..client import GuardClient, GuardRefused, GuardUnavailable
from ..schema import GuardDecision, ToolCall
from .run import Run

log = logging.getLogger(__name__)
FailPolicy = Literal["open", "closed"]


class ToolCallBlocked(RuntimeError):
    """Raised in the agent to stop a tool call: the guard blocked it (``decision`` says
    why), or gave no answer under ``fail_policy="closed"`` (``decision`` is None)."""

    def __init__(self, call: ToolCall, reason: str, decision: GuardDecision | None) -> None:
        super().__init__(f"tool call {call.name!r} blocked: {reason}")
        self.call = call
        self.decision = decision


def run_so_far(run: Run | None, run_id: str, call: ToolCall) -> dict[str, Any]:
    """The run as the guard reads it: its request and its steps, without ``call``. A
    framework reports the model's reply that proposed the call before the call runs, so
    the adapter has it recorded already; the guard appends it itself, as the last step."""
    if run is None:
        return {"id": run_id, "request": ""}
    steps = [step.model_dump(exclude_defaults=True) for step in run.steps]
    for step in reversed(steps):
        calls = step.get("tool_calls") or []
        if step["role"] != "assistant" or not calls:
            continue
        same = [i for i, c in enumerate(calls) if c["name"] == call.name
                and ToolCall.model_validate(c).arguments_text == call.arguments_text]
        if same:
            del calls[same[-1]]
            if not calls and not step.get("content"):
                steps.remove(step)
        break
    return {"id": run_id, "request": run.request, "steps": steps}


def blocked(call: ToolCall, decision: GuardDecision | GuardUnavailable | GuardRefused,
            fail_policy: FailPolicy) -> ToolCallBlocked | None:
    """Why to stop ``call`` given the guard's answer, or None to run it. No answer (the
    guard is down, or refused a run it cannot read) leaves it to ``fail_policy``."""
    if not isinstance(decision, GuardDecision):
        if fail_policy == "closed":
            return ToolCallBlocked(call, f"{decision} (fail_policy closed)", None)
        log.warning("tool call %r runs unchecked: %s (fail_policy open)", call.name, decision)
        return None
    if decision.decision == "allow":
        return None
    verdict = decision.verdict
    why = verdict.error if verdict.status == "error" else (
        f"score {verdict.score:.2f} at or above {verdict.threshold:g}"
        + (f" ({verdict.category})" if verdict.category else ""))
    return ToolCallBlocked(call, f"{why}; {verdict.rationale or ''}".rstrip("; "), decision)


def check_sync(guard: GuardClient, run: dict[str, Any], call: ToolCall,
               fail_policy: FailPolicy) -> ToolCallBlocked | None:
    try:
        answer: GuardDecision | GuardUnavailable | GuardRefused = guard.check_sync(run, call)
    except (GuardUnavailable, GuardRefused) as exc:
        answer = exc
    return blocked(call, answer, fail_policy)


async def check(guard: GuardClient, run: dict[str, Any], call: ToolCall,
                fail_policy: FailPolicy) -> ToolCallBlocked | None:
    try:
        answer: GuardDecision | GuardUnavailable | GuardRefused = await guard.check(run, call)
    except (GuardUnavailable, GuardRefused) as exc:
        answer = exc
    return blocked(call, answer, fail_policy)
