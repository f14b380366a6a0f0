"""OpenTelemetry GenAI spans to trajectories: one trace, one trajectory.

Any framework that emits the GenAI semantic conventions (v1.37 and later: messages on
``gen_ai.input.messages`` / ``gen_ai.output.messages``, tools on ``execute_tool`` spans) is
covered by adding one span processor:

    provider.add_span_processor(TrajectorySpanProcessor())

Spans of a trace are held until its root span ends; then the first inference span's input
gives the request, each inference span's output an assistant step (its text and tool
calls), each tool span a tool step (its result), and the last text answer the response.
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
    def __init__(self, outbox: Outbox | None = None, max_traces: int = 1000) -> None:
        self.outbox = outbox or Outbox()
        self.max_traces = max_traces
        self._traces: OrderedDict[int, list[ReadableSpan]] = OrderedDict()
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        context = span.get_span_context()
        if context is None:
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

    def shutdown(self) -> None:
        self.outbox.flush()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.outbox.flush(timeout_millis / 1000)


def assemble(trace_id: str, spans: list[ReadableSpan]) -> Trajectory | None:
    """The trajectory of one trace's GenAI spans, or None if it has none."""
    run = Run()
    agent = None
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        attributes = span.attributes or {}
        operation = attributes.get("gen_ai.operation.name")
        agent = agent or attributes.get("gen_ai.agent.name")
        if operation in INFERENCE:
            run.asked(_first(_messages(attributes, "gen_ai.input.messages"), "user"))
            for message in _messages(attributes, "gen_ai.output.messages"):
                run.said(_text(message), _calls(message))
        elif operation == "execute_tool":
            run.answered(str(attributes.get("gen_ai.tool.call.result", "")))
    return run.trajectory(trace_id, {"trace_id": trace_id, "source": "opentelemetry"}
                          | ({"agent": str(agent)} if agent else {}), "opentelemetry",
                          "the framework may not record gen_ai.input.messages and "
                          "gen_ai.output.messages (often a setting to capture content)")


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
