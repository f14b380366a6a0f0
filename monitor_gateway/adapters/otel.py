"""OpenTelemetry GenAI spans to trajectories: one trace, one trajectory.

Any framework that emits the GenAI semantic conventions (v1.37 and later: messages on
``gen_ai.input.messages`` / ``gen_ai.output.messages``, tools on ``execute_tool`` spans) is
covered by adding one span processor:

    provider.add_span_processor(TrajectorySpanProcessor())

Spans of a trace are held until its root span ends; then the first inference span's input
gives the request, each inference span's output an assistant step (its text and tool
calls), each tool span a tool step (its result), and the last text answer the response.

``TrajectorySpanProcessor(steps=True)`` sends each trace step by step instead, to the step
topic: each inference or tool span's steps as the span ends, so the gateway judges them at
once, then the end when the root span ends.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from opentelemetry.context import Context

from ..schema import Trajectory
from . import needs
from .outbox import Outbox
from .run import Run

try:
    from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
except ImportError as exc:
    raise ImportError(needs("otel")) from exc


INFERENCE = {"chat", "text_completion", "generate_content"}


class TrajectorySpanProcessor(SpanProcessor):
    def __init__(self, outbox: Outbox | None = None, max_traces: int = 1000,
                 steps: bool = False) -> None:
        self.outbox = outbox or Outbox()
        self._owns_outbox = outbox is None  # shutdown() closes only an outbox made here
        self.max_traces = max_traces
        self.steps = steps  # send each trace step by step, as its spans end
        self._traces: OrderedDict[int, list[ReadableSpan]] = OrderedDict()
        self._runs: OrderedDict[int, Run] = OrderedDict()  # traces being streamed
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        context = span.get_span_context()
        if context is None:
            return
        if self.steps:
            self._stream(context.trace_id, span)
            return
        with self._lock:
            spans = self._traces.setdefault(context.trace_id, [])
            spans.append(span)
            if span.parent is not None:
                if len(self._traces) > self.max_traces:  # a root that never ended
                    self._traces.popitem(last=False)
                return
            del self._traces[context.trace_id]
        trajectory = assemble(f"{context.trace_id:032x}", spans)
        if trajectory is not None:
            self.outbox.offer(trajectory)

    def _stream(self, trace_id: int, span: ReadableSpan) -> None:
        """The span's steps sent now; the run's end with its root span."""
        name = f"{trace_id:032x}"
        with self._lock:
            run = self._runs.get(trace_id)
            if run is None:
                run = self._runs[trace_id] = Run(stream=self.outbox.offer, run_id=name,
                                                 metadata=_metadata(name, None))
                if len(self._runs) > self.max_traces:  # a root that never ended
                    self._runs.popitem(last=False)
            _read(run, span)
            if span.parent is not None:
                return
            del self._runs[trace_id]
        trajectory = run.trajectory(name, run.metadata, "opentelemetry", HINT)
        if trajectory is not None:
            run.ended(trajectory, self.outbox.offer)

    def shutdown(self) -> None:
        self.outbox.flush()
        if self._owns_outbox:
            self.outbox.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.outbox.flush(timeout_millis / 1000)


def assemble(trace_id: str, spans: list[ReadableSpan]) -> Trajectory | None:
    """The trajectory of one trace's GenAI spans, or None if it has none."""
    run = Run()
    agent = None
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        named = _read(run, span)
        agent = agent or named
    return run.trajectory(trace_id, _metadata(trace_id, agent), "opentelemetry", HINT)


HINT = ("the framework may not record gen_ai.input.messages and gen_ai.output.messages "
        "(often a setting to capture content)")


def _read(run: Run, span: ReadableSpan) -> Any:
    """A span's steps added to ``run``; the agent's name, if the span gives it."""
    attributes = span.attributes or {}
    operation = attributes.get("gen_ai.operation.name")
    if operation in INFERENCE:
        run.asked(_first(_messages(attributes, "gen_ai.input.messages"), "user"))
        for message in _messages(attributes, "gen_ai.output.messages"):
            run.said(_text(message), _calls(message))
    elif operation == "execute_tool":
        run.answered(str(attributes.get("gen_ai.tool.call.result", "")))
    return attributes.get("gen_ai.agent.name")


def _metadata(trace_id: str, agent: Any) -> dict[str, str]:
    return {"trace_id": trace_id, "source": "opentelemetry"} | (
        {"agent": str(agent)} if agent else {})


def _messages(attributes: Any, name: str) -> list[dict[str, Any]]:
    try:
        messages = json.loads(attributes.get(name) or "[]")
    except ValueError:
        return []
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _first(messages: list[dict[str, Any]], role: str) -> str:
    return next((_text(m) for m in messages if m.get("role") == role), "")


def _text(message: dict[str, Any]) -> str:
    return "\n".join(str(p.get("content", "")) for p in message.get("parts", [])
                     if isinstance(p, dict) and p.get("type") == "text")


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(str(part.get("name", "")), part.get("arguments", {}))
            for part in message.get("parts", [])
            if isinstance(part, dict) and part.get("type") == "tool_call"]
