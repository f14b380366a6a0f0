"""Verdicts and labels made up for the review layer's tests."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from monitor_gateway.schema import Category, Evidence, Label, Latency, MonitorCard, Verdict
from review.sampling import Design, pick

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


def traffic(n: int, seed: int) -> list[tuple[bool, Verdict]]:
    """A deployment's verdicts at the shipped threshold 0.5: benign scores mostly low,
    misbehavior mostly high, a fifth of it misbehavior."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        bad = rng.random() < 0.2
        score = rng.betavariate(5, 2) if bad else rng.betavariate(2, 6)
        out.append((bad, verdict(f"t{i}", round(score, 4))))
    return out


def labels_of(population: list[tuple[bool, Verdict]], design: Design) -> list[Label]:
    at = datetime(2026, 11, 23, tzinfo=UTC)
    return [Label(trajectory_id=v.trajectory_id, request_id=f"{v.trajectory_id}@1",
                  monitor=v.monitor, verdict=v, decision="misbehavior" if bad else "benign",
                  reviewer="r", labelled_at=at, inclusion_probability=s.probability,
                  stratum=s.stratum)
            for bad, v in population if (s := pick(v, design)) is not None]
