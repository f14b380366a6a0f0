"""OpenAI Agents SDK runs to trajectories: one trace, one trajectory.

    from agents import Runner, add_trace_processor
    from monitor_gateway.adapters.openai_agents import TrajectoryProcessor

    monitor = TrajectoryProcessor()
    add_trace_processor(monitor)
    await Runner.run(agent, request, hooks=monitor.hooks)

With ``hooks`` (any ``Model``), the run's hooks record it: the run's input gives the
request, each model response an assistant step (its text and function calls), each tool's
result a tool step, and the last text answer the response. Without them, the SDK's own
spans do, for its OpenAI models only: a response span (Responses API) or a generation span
(Chat Completions) for each model call, a function span for each tool call; a ``Model`` of
your own records no model span, so its trajectory would have only its tool steps (the
adapter warns). The SDK records model inputs and outputs in spans only while
``RunConfig.trace_include_sensitive_data`` is on (its default). Either way, a trajectory
is sent when its trace ends.

``TrajectoryProcessor(steps=True)`` sends each run the hooks record step by step instead,
to the step topic: each model response and tool result as it happens, so the gateway
judges it at once, then the end when the trace ends (runs recorded from spans alone are
sent whole: spans end in no order a run can be streamed in).

``tool_guard`` stops a function tool's call before it runs when the guard service
(``monitor-gateway guard``) blocks it: an SDK tool input guardrail, given to the tool as
``function_tool(..., tool_input_guardrails=[tool_guard(processor=monitor)])``. With the
processor (and its hooks), the guard judges the call with the run so far.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Literal

from ..client import GuardClient
from ..schema import ToolCall, Trajectory
from . import needs
from .guarding import FailPolicy, check, run_so_far
from .outbox import Outbox
from .run import Run, text_of

try:
    from agents import (
        Agent,
        ModelResponse,
        RunContextWrapper,
        RunHooks,
        Tool,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
        ToolInputGuardrailData,
    )
    from agents.tracing import (
        FunctionSpanData,
        GenerationSpanData,
        ResponseSpanData,
        Span,
        Trace,
        TracingProcessor,
        get_current_trace,
    )
except ImportError as exc:
    raise ImportError(needs("openai-agents")) from exc


class TrajectoryProcessor(TracingProcessor):
    def __init__(self, outbox: Outbox | None = None, max_traces: int = 1000,
                 steps: bool = False) -> None:
        self.outbox = outbox or Outbox()
        self._owns_outbox = outbox is None  # shutdown() closes only an outbox made here
        self.max_traces = max_traces
        self.steps = steps  # send each hooked run step by step, as it happens
        self._spans: OrderedDict[str, list[Span[Any]]] = OrderedDict()
        self._hooked: OrderedDict[str, Run] = OrderedDict()  # runs the hooks recorded
        self._lock = threading.Lock()
        self.hooks = TrajectoryHooks(self)

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
            hooked = self._hooked.pop(trace.trace_id, None)
        trajectory = assemble(trace, spans) if hooked is None else _finish(trace, hooked)
        if trajectory is None:
            return
        if hooked is None:
            self.outbox.offer(trajectory)
        else:
            hooked.ended(trajectory, self.outbox.offer)

    def hooked_run(self) -> Run | None:
        """The run the hooks record for the current trace (None outside a trace)."""
        trace = get_current_trace()
        if trace is None:
            return None
        with self._lock:
            if trace.trace_id not in self._hooked and len(self._hooked) >= self.max_traces:
                self._hooked.popitem(last=False)  # a trace that never ended
            run = self._hooked.get(trace.trace_id)
            if run is None:
                run = self._hooked[trace.trace_id] = Run(
                    stream=self.outbox.offer, run_id=trace.trace_id,
                    metadata=_metadata(trace)) if self.steps else Run()
            return run

    def shutdown(self) -> None:
        self.outbox.flush()
        if self._owns_outbox:
            self.outbox.close()

    def force_flush(self) -> None:
        self.outbox.flush()


class TrajectoryHooks(RunHooks[Any]):
    """A run's model calls and tool calls as its hooks see them, with any ``Model``: pass
    as ``Runner.run(agent, input, hooks=processor.hooks)``."""

    def __init__(self, processor: TrajectoryProcessor) -> None:
        self._processor = processor

    async def on_llm_start(self, context: RunContextWrapper[Any], agent: Agent[Any],
                           system_prompt: str | None, input_items: list[Any]) -> None:
        if (run := self._processor.hooked_run()) is not None:
            run.asked(_user_text(input_items))

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any],
                         response: ModelResponse) -> None:
        if (run := self._processor.hooked_run()) is not None:
            _said(run, response.output)

    async def on_tool_end(self, context: RunContextWrapper[Any], agent: Agent[Any],
                          tool: Tool, result: object) -> None:
        if (run := self._processor.hooked_run()) is not None:
            run.answered(result)


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
    return _finish(trace, run)


def _metadata(trace: Trace) -> dict[str, Any]:
    return {"trace_id": trace.trace_id, "source": "openai-agents",
            "workflow": trace.name} | dict(getattr(trace, "metadata", None) or {})


def _finish(trace: Trace, run: Run) -> Trajectory | None:
    return run.trajectory(trace.trace_id, _metadata(trace), "openai-agents",
                          "a Model of your own records no model spans: pass "
                          "hooks=processor.hooks to Runner.run")


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


def tool_guard(guard: GuardClient | None = None,
               processor: TrajectoryProcessor | None = None,
               fail_policy: FailPolicy = "open",
               on_block: Literal["raise", "reject"] = "raise") -> ToolInputGuardrail[Any]:
    """A tool input guardrail that asks ``guard`` (a local guard by default) about each
    call of the tools it is given to, before the call runs. A blocked call does not run:
    ``raise`` halts the run (``Runner.run`` raises the SDK's
    ``ToolInputGuardrailTripwireTriggered``, its ``output.output_info`` the
    :class:`~.guarding.ToolCallBlocked`), ``reject`` tells the model the call was blocked
    and why, and the run goes on. ``processor``: the run so far, as its hooks recorded it
    (without it, the guard judges the call alone, the request and earlier steps unknown).
    ``fail_policy``: what a call does when the guard gives no answer."""
    client = guard or GuardClient()

    async def monitor_gateway_guard(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        call = ToolCall(name=context.tool_name, arguments=context.tool_arguments)
        trace = get_current_trace()
        run_id = trace.trace_id if trace is not None else context.tool_call_id
        run = processor.hooked_run() if processor is not None else None
        stop = await check(client, run_so_far(run, run_id, call), call, fail_policy)
        if stop is None:
            return ToolGuardrailFunctionOutput.allow()
        if on_block == "reject":
            return ToolGuardrailFunctionOutput.reject_content(str(stop), output_info=stop)
        return ToolGuardrailFunctionOutput.raise_exception(output_info=stop)

    return ToolInputGuardrail(guardrail_function=monitor_gateway_guard)
