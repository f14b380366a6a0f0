"""The one interface every monitor backend implements."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..schema import Category, MonitorCard, Severity, Step, Trajectory
from ..settings import GatewaySettings


@dataclass(frozen=True, slots=True)
class Quote:
    """A snippet a monitor offers as proof. ``source``/``start`` are hints: the grounding step
    checks them against the trajectory and searches when they are missing or wrong."""

    text: str
    source: str | None = None
    start: int | None = None


@dataclass(frozen=True, slots=True)
class Judgement:
    """What a monitor found: a score in [0, 1], and what backs it. Whether that flags the
    trajectory is the policy's decision, not the monitor's."""

    score: float
    category: Category | None = None
    severity: Severity | None = None
    quotes: list[Quote] = field(default_factory=list)
    rationale: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Delegated(Judgement):
    """A composite monitor's judgement (a cascade's): which of its monitors decided, and
    each stage's time under its backend's name."""

    card: MonitorCard
    stages: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class MonitorFailure:
    """A monitor that gave no judgement after its retries: the reason becomes an error
    verdict's ``error``."""

    reason: str
    attempts: int


class MonitorUnavailable(Exception):
    """Raised by a monitor whose backend did not answer (refused connection, 5xx, overload):
    the gateway waits the outage out instead of giving this trajectory an error verdict."""


@runtime_checkable
class Monitor(Protocol):
    """Judges one trajectory. May raise or hang: the gateway bounds both."""

    card: MonitorCard

    async def judge(self, trajectory: Trajectory) -> Judgement: ...


@runtime_checkable
class Closeable(Protocol):
    """A monitor holding connections (an HTTP client) closes them when the gateway stops."""

    async def aclose(self) -> None: ...


@runtime_checkable
class InlineMonitor(Monitor, Protocol):
    """A monitor that is pure computation, bounded and quick (rules, a classifier). The
    gateway calls ``judge_now`` on its fetch loop: no task, no timer, no waiting."""

    def judge_now(self, trajectory: Trajectory) -> Judgement: ...


@runtime_checkable
class HeavyMonitor(InlineMonitor, Protocol):
    """An inline monitor that takes milliseconds, not microseconds (the offline monitor):
    unless ``WORKERS`` says otherwise, the gateway judges it in worker processes."""

    heavy: bool


@runtime_checkable
class StepMonitor(Protocol):
    """A monitor that also judges a run step by step, as the steps arrive (issue 36): pure
    computation on the fetch loop, at a cost that does not grow with the run's length.
    A run's final verdict is still ``judge`` of the whole run."""

    card: MonitorCard

    def judge_step(self, request: str, steps: Sequence[Step], index: int) -> Judgement | None:
        """Judge ``steps[index]`` in the context of the run so far (the monitor reads only
        what it needs of ``request`` and the steps before); None when nothing in it can be
        judged before the run's end. Quotes' sources name the step by ``index``."""
        ...


Factory = Callable[[GatewaySettings], Monitor]
"""What builds a monitor from the gateway's settings (a backend's ``from_settings``)."""
