"""A cascade: cheap monitors first, the LLM judge only for the uncertain band.

Each stage decides when its score is below ``low`` (benign) or at least ``high``
(misbehavior); otherwise the trajectory goes to the next stage, and the last stage decides
whatever reaches it. The verdict's monitor card names the stage that decided, and each
stage's time is reported under its backend's latency label.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from ..config import load_config
from ..schema import MonitorCard, Trajectory
from ..settings import GatewaySettings, SettingsError
from .base import Closeable, Delegated, InlineMonitor, Monitor

# the offline monitor decides alone where it was precise on held-out dev scores
# (``monitor-gateway train --kind cascade`` writes it; docs/monitors.md: "Cascades and thresholds")
DEFAULT = Path(__file__).with_name("cascade.toml")


@dataclass(frozen=True)
class Tier:
    """One tier of a cascade: its monitor decides below ``low`` and at or above ``high``."""

    monitor: Monitor
    low: float
    high: float


class CascadeMonitor:
    def __init__(self, tiers: list[Tier]) -> None:
        self.tiers = tiers
        names = " → ".join(tier.monitor.card.name for tier in tiers)
        digest = hashlib.sha256(
            repr([(s.monitor.card.name, s.monitor.card.version, s.low, s.high)
                  for s in tiers]).encode()).hexdigest()[:8]
        self.card = MonitorCard(
            name="cascade", backend="cascade", version=digest,
            label=f"cascade {names}",
        )

    async def aclose(self) -> None:
        for tier in self.tiers:
            if isinstance(tier.monitor, Closeable):
                await tier.monitor.aclose()

    async def judge(self, trajectory: Trajectory) -> Delegated:
        timings: list[tuple[str, float]] = []
        for index, tier in enumerate(self.tiers):
            started = time.perf_counter()
            monitor = tier.monitor
            judgement = (monitor.judge_now(trajectory) if isinstance(monitor, InlineMonitor)
                         else await monitor.judge(trajectory))
            timings.append((monitor.card.backend, time.perf_counter() - started))
            last = index == len(self.tiers) - 1
            if last or judgement.score < tier.low or judgement.score >= tier.high:
                return Delegated(score=judgement.score, category=judgement.category,
                                 severity=judgement.severity, quotes=judgement.quotes,
                                 rationale=judgement.rationale, card=self._decided_by(index),
                                 stages=tuple(timings))
        raise AssertionError("a cascade has at least one stage")  # pragma: no cover

    def _decided_by(self, index: int) -> MonitorCard:
        stage = self.tiers[index].monitor.card
        return MonitorCard(
            name=f"cascade/{stage.name}", backend=stage.backend, model=stage.model,
            template=stage.template, version=self.card.version,
            label=f"{self.card.label}; decided by stage {index + 1}: {stage.label}",
        )


def from_settings(settings: GatewaySettings) -> CascadeMonitor:
    """``MONITOR=cascade``: the stages of ``--monitor-config``, each built by name; without
    one, the default: the offline monitor, then the LLM judge."""
    from .registry import build_monitor

    stages = load_config(settings.monitor_config or str(DEFAULT)).stage
    if not stages:
        raise SettingsError(f"MONITOR=cascade: {settings.monitor_config} has no [[stage]] "
                            "tables")
    if any(stage.monitor == "cascade" for stage in stages):
        raise SettingsError("a cascade stage cannot itself be a cascade")
    return CascadeMonitor([
        Tier(build_monitor(settings.model_copy(update={"monitor": stage.monitor})),
             stage.low, stage.high) for stage in stages])
