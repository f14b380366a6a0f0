"""Assemble the Verdict the CONTRACT promises from a judgement or a failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from .calling import MonitorFailure
from .monitors.base import Judgement
from .schema import Evidence, Latency, MonitorCard, ReplayTag, Trajectory, Verdict, utcnow


@dataclass(frozen=True)
class Thresholds:
    """One global threshold, optionally one per category (``calibrate`` writes them)."""

    default: float
    by_category: dict[str, float] = field(default_factory=dict)

    def of(self, category: str | None) -> float:
        return self.by_category.get(category, self.default) if category else self.default


def build_verdict(
    trajectory: Trajectory,
    outcome: Judgement | MonitorFailure,
    evidence: list[Evidence],
    *,
    card: MonitorCard,
    thresholds: Thresholds,
    fail_policy: Literal["open", "closed"],
    tag: ReplayTag | None,
    received_at: datetime,
    monitor_seconds: float,
    gateway_seconds: float,
) -> Verdict:
    category = outcome.category if isinstance(outcome, Judgement) else None
    threshold = thresholds.of(category)
    common = {
        "trajectory_id": trajectory.id,
        "threshold": threshold,
        "monitor": card,
        "replay_run": tag.run if tag else None,
        "metadata": trajectory.metadata,
        "received_at": received_at,
        "decided_at": utcnow(),
        "latency_ms": Latency(monitor=monitor_seconds * 1000, gateway=gateway_seconds * 1000),
    }
    if isinstance(outcome, MonitorFailure):
        closed = fail_policy == "closed"
        return Verdict(
            flagged=closed, score=1.0 if closed else 0.0, status="error", error=outcome.reason,
            **common,
        )
    return Verdict(
        flagged=outcome.score >= threshold,
        score=outcome.score,
        category=outcome.category,
        severity=outcome.severity,
        evidence=evidence,
        rationale=outcome.rationale,
        **common,
    )
