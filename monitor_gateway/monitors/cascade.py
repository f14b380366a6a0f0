"""A cascade: cheap monitors first, the LLM judge only for the uncertain band.

Each stage decides when its score is below ``low`` (benign) or at least ``high``
(misbehavior); otherwise the trajectory goes to the next stage, and the last stage decides
whatever reaches it. The verdict's monitor card names the stage that decided, and each
stage's time is reported under its backend's latency label.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, replace

from ..config import load_config
from ..schema import MonitorCard, Trajectory
from ..settings import GatewaySettings, SettingsError
from .base import Closeable, InlineMonitor, Judgement, Monitor


@dataclass(frozen=True)
class Step:
    monitor: Monitor
    low: float
    high: float


class CascadeMonitor:
    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        names = " → ".join(step.monitor.card.name for step in steps)
        digest = hashlib.sha256(
            repr([(s.monitor.card.name, s.monitor.card.version, s.low, s.high)
                  for s in steps]).encode()).hexdigest()[:8]
        self.card = MonitorCard(
            name="cascade", backend="cascade", version=digest,
            label=f"cascade {names}",
        )

    async def aclose(self) -> None:
        for step in self.steps:
            if isinstance(step.monitor, Closeable):
                await step.monitor.aclose()

    async def judge(self, trajectory: Trajectory) -> Judgement:
        timings: list[tuple[str, float]] = []
        for index, step in enumerate(self.steps):
            started = time.perf_counter()
            monitor = step.monitor
            judgement = (monitor.judge_now(trajectory) if isinstance(monitor, InlineMonitor)
                         else await monitor.judge(trajectory))
            timings.append((monitor.card.backend, time.perf_counter() - started))
            last = index == len(self.steps) - 1
            if last or judgement.score < step.low or judgement.score >= step.high:
                return replace(judgement, card=self._decided_by(index), stages=tuple(timings))
        raise AssertionError("a cascade has at least one stage")  # pragma: no cover

    def _decided_by(self, index: int) -> MonitorCard:
        stage = self.steps[index].monitor.card
        return MonitorCard(
            name=f"cascade/{stage.name}", backend=stage.backend, model=stage.model,
            template=stage.template, version=self.card.version,
            label=f"{self.card.label}; decided by stage {index + 1}: {stage.label}",
        )


def from_settings(settings: GatewaySettings) -> CascadeMonitor:
    """``MONITOR=cascade``: the stages of ``--monitor-config``, each built by name."""
    from .registry import build_monitor

    stages = load_config(settings.monitor_config).stage
    if not stages:
        raise SettingsError("MONITOR=cascade needs a --monitor-config file with [[stage]] "
                            "tables")
    if any(stage.monitor == "cascade" for stage in stages):
        raise SettingsError("a cascade stage cannot itself be a cascade")
    return CascadeMonitor([
        Step(build_monitor(settings.model_copy(update={"monitor": stage.monitor})),
             stage.low, stage.high) for stage in stages])
