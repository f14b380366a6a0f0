"""Verdicts and labels made up for the review layer's tests."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor_gateway.schema import Category, Evidence, Latency, MonitorCard, Verdict

AT = datetime(2026, 11, 22, 10, tzinfo=UTC)


def verdict(trajectory_id: str, score: float, threshold: float = 0.5,
            category: Category | None = None, version: str = "1",
            evidence: list[Evidence] | None = None, replay_run: str | None = None) -> Verdict:
    return Verdict(
        trajectory_id=trajectory_id, flagged=score >= threshold, score=score,
        threshold=threshold, category=category, evidence=evidence or [],
        monitor=MonitorCard(name="offline", backend="offline", version=version,
                            label="offline monitor"),
        replay_run=replay_run, received_at=AT, decided_at=AT,
        latency_ms=Latency(monitor=1.0, gateway=2.0))
