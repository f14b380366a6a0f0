"""One agent run as an adapter sees it, in the order things happened: what was asked, what
the agent said and called, what its tools answered. Each adapter feeds one of these from
its framework's events and turns it into the trajectory the gateway judges."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..schema import Step, ToolCall, Trajectory


@dataclass
class Run:
    request: str = ""
    response: str = ""
    steps: list[Step] = field(default_factory=list)

    def asked(self, text: str) -> None:
        """The user's request; the first one asked is the run's."""
        if not self.request and not self.steps:
            self.request = text

    def said(self, text: str, calls: Sequence[tuple[str, Any]] = ()) -> None:
        """An assistant turn: its text and its tool calls as (name, arguments), arguments
        an object or a JSON string. The last turn without calls is the response."""
        self.steps.append(Step(role="assistant", content=text, tool_calls=[
            ToolCall(name=name, arguments=_arguments(arguments)) for name, arguments in calls]))
        if not calls and text:
            self.response = text

    def answered(self, result: Any) -> None:
        """A tool's result."""
        self.steps.append(Step(role="tool", content=result if isinstance(result, str)
                               else json.dumps(result, default=str, ensure_ascii=False)))

    def trajectory(self, run_id: str, metadata: dict[str, Any]) -> Trajectory | None:
        """The trajectory of this run, or None when nothing in it can be judged."""
        if not self.steps and not self.response:
            return None
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
