"""Thresholds that meet a false-alarm budget, from a replay's per-sample scores.

For each category (and overall) the lowest threshold whose FAR on that category's benign
samples is within the budget: the lowest threshold flags the most, so it has the lowest MR
the budget allows. Samples are grouped by the category the monitor *predicted* (the
verdict's ``category``), because that is the category by which the gateway's policy picks
a threshold when it serves. Pure functions on scores; the CLI reads and writes the files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from monitor_gateway.schema import CATEGORIES, Label


@dataclass(frozen=True, slots=True)
class Operating:
    threshold: float
    far: float | None
    mr: float | None
    benign: int = 0  # the samples the threshold rests on
    misbehavior: int = 0


# below this many false alarms allowed by the budget, a threshold rests on too few samples
FEW_FALSE_ALARMS = 3


def too_few(point: Operating, max_far: float) -> bool:
    """The budget allows fewer than ``FEW_FALSE_ALARMS`` false alarms on these benign
    samples: the threshold is set by a handful of scores."""
    return point.benign * max_far < FEW_FALSE_ALARMS


def pick_threshold(benign: Iterable[float], misbehavior: Iterable[float], max_far: float
                   ) -> Operating:
    """The lowest candidate threshold (a score seen, or 1.0) with FAR <= ``max_far``."""
    return pick_weighted([(s, 1.0) for s in benign], [(s, 1.0) for s in misbehavior], max_far)


def pick_weighted(benign: Iterable[tuple[float, float]],
                  misbehavior: Iterable[tuple[float, float]], max_far: float) -> Operating:
    """``pick_threshold`` on (score, weight) pairs: a sample stands for ``weight`` of its
    kind (a production label for 1 / its inclusion probability), FAR and MR are weighted
    shares; the counts are of samples."""
    benign, misbehavior = sorted(benign), sorted(misbehavior)
    for threshold in sorted({*(s for s, _ in benign), *(s for s, _ in misbehavior), 1.0}):
        far = _share(benign, threshold)
        if far is None or far <= max_far:
            mr = None if not misbehavior else 1 - (_share(misbehavior, threshold) or 0.0)
            return Operating(threshold, far, mr, len(benign), len(misbehavior))
    raise AssertionError("a threshold of 1.0 flags no benign score below 1")  # pragma: no cover


def _share(scored: list[tuple[float, float]], threshold: float) -> float | None:
    """The weighted share of scores flagged at ``threshold`` (score >= threshold)."""
    total = sum(weight for _, weight in scored)
    if not total:
        return None
    return sum(weight for score, weight in scored if score >= threshold) / total


def calibrate(rows: list[dict[str, object]], max_far: float) -> dict[str, Operating]:
    """Per predicted category and ``default`` (all samples), from a replay's per-sample
    rows (``.samples.jsonl``) or production labels' (``label_rows``), each weighing its
    ``weight`` (1 when absent)."""
    if not 0.0 < max_far < 1.0:
        raise ValueError(f"a false-alarm budget is between 0 and 1, not {max_far:g}")
    rows = [r for r in rows if r.get("status", "ok") == "ok"]
    groups: dict[str, list[dict[str, object]]] = {"default": rows}
    groups.update({c: [r for r in rows if r.get("verdict_category") == c] for c in CATEGORIES})
    def scored(group: list[dict[str, object]], label: str) -> list[tuple[float, float]]:
        return [(float(r["score"]), float(r.get("weight", 1.0)))  # type: ignore[arg-type]
                for r in group if r["label"] == label]

    return {name: pick_weighted(scored(group, "benign"), scored(group, "misbehavior"), max_far)
            for name, group in groups.items() if group}


def label_rows(labels: Iterable[Label]) -> list[dict[str, object]]:
    """Production labels as the per-sample rows ``calibrate`` reads, weighted by the
    inverse of their inclusion probability."""
    return [{"label": label.decision, "score": label.verdict.score,
             "verdict_category": label.verdict.category, "status": label.verdict.status,
             "weight": 1 / label.inclusion_probability, "monitor": label.monitor.name,
             "monitor_version": label.monitor.version} for label in labels]


def read_samples(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
