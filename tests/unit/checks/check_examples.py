"""What every family's examples are made of: a registered check's three trajectories (one
where it fires, its safe twin, its mention twin) and how each is judged. A family's test
file holds its table; ``test_registry`` holds every family to having one for each check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from monitor_gateway.monitors.detectors import detect
from monitor_gateway.schema import Trajectory

REQUEST = "Set the project up."


@dataclass(frozen=True)
class Example:
    """``fires``: the check finds it. ``safe``: the same task done properly, no finding of
    the check. ``mention``: the same dangerous text quoted, reviewed, refused or warned
    against, no finding of the check; ``gap`` says why the check still finds it there
    (a known gap, held by a strict xfail so that a fix is noticed)."""

    fires: Trajectory
    safe: Trajectory
    mention: Trajectory
    gap: str | None = None


def ran(command: str, request: str = REQUEST, response: str = "Done.") -> Trajectory:
    """The agent ran ``command`` in a shell."""
    return called("bash", {"cmd": command}, request, response)


def called(tool: str, arguments: dict[str, Any], request: str = REQUEST,
           response: str = "Done.") -> Trajectory:
    """The agent called ``tool`` with ``arguments``."""
    return Trajectory.model_validate({
        "id": "t", "request": request, "response": response,
        "steps": [{"role": "assistant", "content": "",
                   "tool_calls": [{"name": tool, "arguments": arguments}]},
                  {"role": "tool", "content": "ok"}]})


def wrote(path: str, content: str, request: str = REQUEST) -> Trajectory:
    """The agent wrote ``content`` to the file at ``path``."""
    return called("write_file", {"path": path, "content": content}, request)


def patched(path: str, diff: str, request: str = REQUEST) -> Trajectory:
    """The agent edited the file at ``path`` with a unified ``diff``."""
    return called("edit_file", {"path": path, "diff": diff}, request)


def answered(response: str, request: str = REQUEST) -> Trajectory:
    """The agent answered ``response`` and did nothing else."""
    return Trajectory(id="t", request=request, response=response)


def fenced(language: str, code: str, request: str = REQUEST, before: str = "") -> Trajectory:
    """The agent answered with ``code`` in a fence of ``language``."""
    return answered(f"{before}```{language}\n{code}\n```", request)


def reviewed(code: str, language: str = "bash", request: str = "Is this OK?") -> Trajectory:
    """The user's own ``code``, shown back in a fence and warned against: a review, not an
    act (``detectors._theirs``)."""
    return answered(f"No, don't use this as it is:\n```{language}\n{code}\n```\nIt is unsafe; "
                    "see the fix below.", f"{request}\n```{language}\n{code}\n```")


def cases(examples: dict[str, Example]) -> list[Any]:
    """Each check's three examples as pytest parameters ``(check id, which, trajectory)``,
    the mention twin of a known gap a strict xfail."""
    found = []
    for check, example in examples.items():
        found.append(pytest.param(check, "fires", example.fires, id=f"{check}-fires"))
        found.append(pytest.param(check, "safe", example.safe, id=f"{check}-safe"))
        marks = [pytest.mark.xfail(strict=True, reason=example.gap)] if example.gap else []
        found.append(pytest.param(check, "mention", example.mention, id=f"{check}-mention",
                                  marks=marks))
    return found


def findings(trajectory: Trajectory) -> set[str]:
    """The names of every check that finds something in ``trajectory``."""
    return {signal.name for signal in detect(trajectory)}
