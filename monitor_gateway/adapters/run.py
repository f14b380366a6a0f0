"""One agent run as an adapter sees it, in the order things happened: what was asked, what
the agent said and called, what its tools answered. Each adapter feeds one of these from
its framework's events and turns it into the trajectory the gateway judges."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import Counter

from ..schema import RunEnd, RunStart, RunStep, Step, ToolCall, Trajectory

log = logging.getLogger(__name__)
# in the agent's process, on the default registry its /metrics (if any) serves
INCOMPLETE = Counter("monitor_gateway_adapter_incomplete_trajectories",
                     "Trajectories an adapter sent without a request or without a response",
                     ["adapter", "missing"])
_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


@dataclass
class Run:
    request: str = ""
    response: str = ""
    steps: list[Step] = field(default_factory=list)
    # sent step by step (an adapter's ``steps=True``, issue 36): where each message goes
    # as it happens, and the run's id and metadata (those its trajectory would have)
    stream: Callable[[RunStart | RunStep | RunEnd], object] | None = None
    run_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def asked(self, text: str) -> None:
        """The user's request; the first one asked is the run's."""
        if not self.request and not self.steps:
            self.request = text

    def said(self, text: str, calls: Sequence[tuple[str, Any]] = ()) -> None:
        """An assistant turn: its text and its tool calls as (name, arguments), arguments
        an object or a JSON string. The last turn without calls is the response."""
        if not calls and text:
            self.response = text
        self._add(Step(role="assistant", content=text, tool_calls=[
            ToolCall(name=name, arguments=_arguments(arguments)) for name, arguments in calls]))

    def answered(self, result: Any) -> None:
        """A tool's result."""
        self._add(Step(role="tool", content=result if isinstance(result, str)
                       else json.dumps(result, default=str, ensure_ascii=False)))

    def _add(self, step: Step) -> None:
        """A step, sent at once when streaming (after the run's start, with its first)."""
        self.steps.append(step)
        if self.stream is None:
            return
        if len(self.steps) == 1:
            self.stream(RunStart(type="start", trajectory_id=self.run_id, seq=0,
                                 request=self.request, metadata=self.metadata))
        self.stream(RunStep(type="step", trajectory_id=self.run_id, seq=len(self.steps),
                            step=step))

    def ended(self, trajectory: Trajectory, send: Callable[[Trajectory], object]) -> None:
        """The run is over: its trajectory sent whole by ``send``, or, streaming, its end
        message (its steps went as they happened)."""
        if self.stream is None:
            send(trajectory)
        else:
            self.stream(RunEnd(type="end", trajectory_id=self.run_id,
                               seq=len(self.steps) + 1, response=self.response))

    def trajectory(self, run_id: str, metadata: dict[str, Any], adapter: str,
                   hint: str = "") -> Trajectory | None:
        """The trajectory of this run, or None when nothing in it can be judged. One
        without a request or a response is sent all the same (the monitor judges what
        there is), counted, and warned about once a process and adapter; ``hint`` says
        what usually causes it."""
        if not self.steps and not self.response:
            return None
        for missing, text in (("request", self.request), ("response", self.response)):
            if not text:
                INCOMPLETE.labels(adapter, missing).inc()
                with _warned_lock:
                    first = (adapter, missing) not in _warned
                    _warned.add((adapter, missing))
                if first:
                    log.warning("the %s adapter sent trajectory %s with no %s: the monitor "
                                "judges it without one%s (warned once; counted in "
                                "monitor_gateway_adapter_incomplete_trajectories_total)",
                                adapter, run_id, missing, f"; {hint}" if hint else "")
        return Trajectory(id=run_id, request=self.request, response=self.response,
                          steps=self.steps, metadata=metadata)


def _arguments(arguments: Any) -> dict[str, Any] | str:
    if isinstance(arguments, dict | str):
        return arguments
    return json.dumps(arguments, default=str, ensure_ascii=False)


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list (the shape both
    OpenAI's and LangChain's messages use)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part if isinstance(part, str) else str(part.get("text", ""))
                         for part in content
                         if isinstance(part, str) or (isinstance(part, dict) and "text" in part))
    return "" if content is None else str(content)
