"""OpenAI Agents SDK runs to trajectories: one trace, one trajectory.

    from agents import add_trace_processor
    from monitor_gateway.adapters.openai_agents import TrajectoryProcessor

    add_trace_processor(TrajectoryProcessor())

The SDK's tracing already records every model call (a response span for the Responses
API, a generation span for Chat Completions) and every tool call (a function span with
its arguments and result). Spans of a trace are held until the trace ends; then the first
model input's user message gives the request, each model output an assistant step, each
function span a tool step, and the last text answer the response. The SDK records model
inputs and outputs only while ``RunConfig.trace_include_sensitive_data`` is on (its
default): without them a trajectory has only its tool steps.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..schema import Trajectory
from . import needs
from .outbox import Outbox
from .run import Run, text_of

try:
    from agents.tracing import (
        FunctionSpanData,
        GenerationSpanData,
        ResponseSpanData,
        Span,
        Trace,
        TracingProcessor,
    )
except ImportError as exc:
    raise ImportError(needs("openai-agents")) from exc


class TrajectoryProcessor(TracingProcessor):
    def __init__(self, outbox: Outbox | None = None, max_traces: int = 1000) -> None:
        self.outbox = outbox or Outbox()
        self.max_traces = max_traces
        self._spans: OrderedDict[str, list[Span[Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def on_trace_start(self, trace: Trace) -> None:
        pass

    def on_span_start(self, span: Span[Any]) -> None:
        pass

    def on_span_end(self, span: Span[Any]) -> None:
        if isinstance(span.span_data, FunctionSpanData | GenerationSpanData | ResponseSpanData):
            with self._lock:
                self._spans.setdefault(span.trace_id, []).append(span)
                if len(self._spans) > self.max_traces:  # a trace that never ended
                    self._spans.popitem(last=False)

    def on_trace_end(self, trace: Trace) -> None:
        with self._lock:
            spans = self._spans.pop(trace.trace_id, [])
        trajectory = assemble(trace, spans)
        if trajectory is not None:
            self.outbox.offer(trajectory)

    def shutdown(self) -> None:
        self.outbox.flush()

    def force_flush(self) -> None:
        self.outbox.flush()


def assemble(trace: Trace, spans: list[Span[Any]]) -> Trajectory | None:
    """The trajectory of one trace's model and tool spans, or None if it has none."""
    run = Run()
    for span in sorted(spans, key=lambda s: s.started_at or ""):
        data = span.span_data
        if isinstance(data, GenerationSpanData):  # Chat Completions messages
            run.asked(_user_text(data.input or []))
            for message in data.output or []:
                calls = [(c["function"]["name"], c["function"]["arguments"])
                         for c in message.get("tool_calls") or []]
                run.said(text_of(message.get("content")), calls)
        elif isinstance(data, ResponseSpanData):  # Responses API items
            items = data.input or []
            run.asked(items if isinstance(items, str) else _user_text(items))
            _said(run, data.response.output if data.response is not None else [])
        elif isinstance(data, FunctionSpanData):
            run.answered(data.output if data.output is not None else "")
    metadata = {"trace_id": trace.trace_id, "source": "openai-agents",
                "workflow": trace.name} | dict(getattr(trace, "metadata", None) or {})
    return run.trajectory(trace.trace_id, metadata)


def _said(run: Run, output: list[Any]) -> None:
    """One assistant step for a response's output items: its messages' text and its
    function calls."""
    texts, calls = [], []
    for item in output:
        item = item if isinstance(item, dict) else item.model_dump()
        if item.get("type") == "message":
            texts.append(text_of(item.get("content")))
        elif item.get("type") == "function_call":
            calls.append((item.get("name", ""), item.get("arguments", "")))
    if texts or calls:
        run.said("\n".join(t for t in texts if t), calls)


def _user_text(messages: Sequence[Any]) -> str:
    return next((text_of(m.get("content")) for m in messages
                 if isinstance(m, dict) and m.get("role") == "user"), "")

