"""LangChain and LangGraph runs to trajectories: one agent run, one trajectory.

    from monitor_gateway.adapters.langchain import TrajectoryCallbackHandler

    monitor = TrajectoryCallbackHandler()
    graph.invoke({"messages": [...]}, config={"callbacks": [monitor]})

Every run LangChain starts under a top-level one (a graph, an agent executor, a chain, or
a lone chat model) reports to the handler with its parent; when the top-level run ends, or
fails, its chat models' first human message becomes the request, each model reply an
assistant step (its text and tool calls), each tool's output a tool step, and the last
reply without tool calls the response. The trajectory's id is the top-level run's id.

An agent written as the user's own loop (``model.invoke`` and ``tool.invoke`` called
again and again) starts a top-level run at every call; ``with monitor.agent_run():``
around the loop makes them one trajectory, sent when the block ends.

``TrajectoryCallbackHandler(steps=True)`` sends each run step by step instead, to the step
topic: each model reply and tool output as it happens, so the gateway judges it at once,
then the end when the run ends.

``GuardCallbackHandler`` stops a tool call before it runs when the guard service
(``monitor-gateway guard``) blocks it: its ``on_tool_start`` raises
:class:`~.guarding.ToolCallBlocked`, which LangChain lets through (the handler's
``raise_error`` is on), so the tool's function never runs::

    guard = GuardCallbackHandler(recorder=monitor)  # the run so far, as monitor records it
    graph.invoke({"messages": [...]}, config={"callbacks": [monitor, guard]})
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID, uuid4

from ..client import GuardClient
from ..schema import ToolCall
from . import needs
from .guarding import FailPolicy, check_sync, run_so_far
from .outbox import Outbox
from .run import Run, text_of

try:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.messages import BaseMessage, ToolMessage
    from langchain_core.outputs import LLMResult
except ImportError as exc:
    raise ImportError(needs("langchain")) from exc


class TrajectoryCallbackHandler(BaseCallbackHandler):
    def __init__(self, outbox: Outbox | None = None, max_runs: int = 1000,
                 steps: bool = False) -> None:
        self.outbox = outbox or Outbox()
        self.max_runs = max_runs
        self.steps = steps  # send each run step by step, as it happens
        self._root: dict[UUID, UUID] = {}  # every run in progress -> its top-level run
        self._runs: dict[UUID, Run] = {}
        self._lock = threading.Lock()
        # the agent run a `with agent_run()` block has open here (in this thread or task)
        self._agent_run: ContextVar[UUID | None] = ContextVar(f"agent_run_{id(self)}",
                                                               default=None)

    @contextmanager
    def agent_run(self, run_id: UUID | None = None) -> Iterator[UUID]:
        """One trajectory for every run started inside the block, however many top-level
        runs it makes (a loop of ``model.invoke`` and ``tool.invoke``); sent when the block
        ends, or fails, with ``run_id`` (a new one by default) as its id."""
        group = run_id or uuid4()
        with self._lock:
            self._runs[group] = self._new(group)
        token = self._agent_run.set(group)
        try:
            yield group
        finally:
            self._agent_run.reset(token)
            with self._lock:
                run = self._runs.pop(group, None)
            if run is not None:
                self._send(group, run)

    def recorded(self, run_id: UUID) -> tuple[UUID, Run] | None:
        """The top-level run that ``run_id`` (a run in progress) belongs to, and what was
        recorded of it so far; None for a run the handler does not know."""
        with self._lock:
            root = self._root.get(run_id, run_id)
            run = self._runs.get(root)
        return (root, run) if run is not None else None

    # --- starts: place the run under its top-level run ------------------------------

    def _started(self, run_id: UUID, parent_run_id: UUID | None) -> Run:
        with self._lock:
            root = (self._root.get(parent_run_id, run_id) if parent_run_id
                    else self._agent_run.get() or run_id)
            self._root[run_id] = root
            if root not in self._runs and len(self._runs) >= self.max_runs:
                del self._runs[next(iter(self._runs))]  # a run that never ended
            run = self._runs.get(root)
            if run is None:
                run = self._runs[root] = self._new(root)
            return run

    def _new(self, run_id: UUID) -> Run:
        if not self.steps:
            return Run()
        return Run(stream=self.outbox.offer, run_id=str(run_id), metadata=_metadata(run_id))

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *,
                       run_id: UUID, parent_run_id: UUID | None = None, **_: Any) -> None:
        self._started(run_id, parent_run_id)

    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *,
                      run_id: UUID, parent_run_id: UUID | None = None, **_: Any) -> None:
        self._started(run_id, parent_run_id)

    def on_chat_model_start(self, serialized: dict[str, Any] | None,
                            messages: list[list[BaseMessage]], *, run_id: UUID,
                            parent_run_id: UUID | None = None, **_: Any) -> None:
        run = self._started(run_id, parent_run_id)
        run.asked(next((text_of(m.content) for batch in messages for m in batch
                        if m.type == "human"), ""))

    # --- ends: record what happened; the top-level run's end sends -------------------

    def _run_of(self, run_id: UUID) -> Run | None:
        return self._runs.get(self._root.get(run_id, run_id))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID,
                   parent_run_id: UUID | None = None, **_: Any) -> None:
        run = self._run_of(run_id)
        if run is not None:
            for generations in response.generations[:1]:
                for generation in generations[:1]:
                    message = getattr(generation, "message", None)
                    text = text_of(message.content) if message is not None else generation.text
                    calls = [(c["name"], c["args"]) for c in
                             getattr(message, "tool_calls", None) or []]
                    run.said(text, calls)
        self._ended(run_id)

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                    **_: Any) -> None:
        run = self._run_of(run_id)
        if run is not None:
            run.answered(text_of(output.content) if isinstance(output, ToolMessage) else output)
        self._ended(run_id)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **_: Any) -> None:
        run = self._run_of(run_id)
        if run is not None:
            run.answered(f"error: {error}")
        self._ended(run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **_: Any) -> None:
        self._ended(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **_: Any) -> None:
        self._ended(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **_: Any) -> None:
        self._ended(run_id)

    def _ended(self, run_id: UUID) -> None:
        with self._lock:
            root = self._root.pop(run_id, None)
            run = self._runs.pop(run_id, None) if root == run_id else None
        if run is not None:
            self._send(run_id, run)

    def _send(self, run_id: UUID, run: Run) -> None:
        trajectory = run.trajectory(
            str(run_id), _metadata(run_id), "langchain",
            "an agent written as a loop of invokes makes one run a call: wrap the loop in "
            "'with handler.agent_run():'")
        if trajectory is not None:
            run.ended(trajectory, self.outbox.offer)


def _metadata(run_id: UUID) -> dict[str, str]:
    return {"run_id": str(run_id), "source": "langchain"}


class GuardCallbackHandler(BaseCallbackHandler):
    """Asks ``guard`` (a local guard by default) about each tool call before it runs, and
    raises :class:`~.guarding.ToolCallBlocked` to stop a blocked one. ``recorder``: the
    handler recording the same runs (listed before this one in ``callbacks``), for the
    guard to judge the call with the run so far. ``fail_policy``: what a call does when
    the guard gives no answer."""

    raise_error = True  # LangChain swallows a handler's exception unless this is on

    def __init__(self, guard: GuardClient | None = None,
                 recorder: TrajectoryCallbackHandler | None = None,
                 fail_policy: FailPolicy = "open") -> None:
        self.guard = guard or GuardClient()
        self.recorder = recorder
        self.fail_policy = fail_policy

    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *,
                      run_id: UUID, parent_run_id: UUID | None = None,
                      inputs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        name = (serialized or {}).get("name") or kwargs.get("name") or "tool"
        call = ToolCall(name=name, arguments=inputs if inputs is not None else input_str)
        found = self.recorder.recorded(run_id) if self.recorder is not None else None
        root, run = found if found is not None else (parent_run_id or run_id, None)
        stop = check_sync(self.guard, run_so_far(run, str(root), call), call, self.fail_policy)
        if stop is not None:
            raise stop
