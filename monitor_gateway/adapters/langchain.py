"""LangChain and LangGraph runs to trajectories: one top-level run, one trajectory.

    from monitor_gateway.adapters.langchain import TrajectoryCallbackHandler

    monitor = TrajectoryCallbackHandler()
    graph.invoke({"messages": [...]}, config={"callbacks": [monitor]})

Every run LangChain starts under a top-level one (a graph, an agent, a chain, or a lone
chat model) reports to the handler with its parent; when the top-level run ends, or fails,
its chat models' first human message becomes the request, each model reply an assistant
step (its text and tool calls), each tool's output a tool step, and the last reply
without tool calls the response. The trajectory's id is the top-level run's id.
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

from . import needs
from .outbox import Outbox
from .run import Run, text_of

try:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.messages import BaseMessage, ToolMessage
    from langchain_core.outputs import LLMResult
except ImportError as exc:
    raise ImportError(needs("langchain")) from exc


class TrajectoryCallbackHandler(BaseCallbackHandler):
    def __init__(self, outbox: Outbox | None = None, max_runs: int = 1000) -> None:
        self.outbox = outbox or Outbox()
        self.max_runs = max_runs
        self._root: dict[UUID, UUID] = {}  # every run in progress -> its top-level run
        self._runs: dict[UUID, Run] = {}
        self._lock = threading.Lock()

    # --- starts: place the run under its top-level run ------------------------------

    def _started(self, run_id: UUID, parent_run_id: UUID | None) -> Run:
        with self._lock:
            root = self._root.get(parent_run_id, run_id) if parent_run_id else run_id
            self._root[run_id] = root
            if root not in self._runs and len(self._runs) >= self.max_runs:
                del self._runs[next(iter(self._runs))]  # a run that never ended
            return self._runs.setdefault(root, Run())

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
            trajectory = run.trajectory(str(run_id), {"run_id": str(run_id),
                                                      "source": "langchain"})
            if trajectory is not None:
                self.outbox.offer(trajectory)

