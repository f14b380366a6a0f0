"""Thresholds that meet a false-alarm budget, from a replay's per-sample scores.

For each category (and overall) the lowest threshold whose FAR on that category's benign
samples is within the budget: the lowest threshold flags the most, so it has the lowest MR
the budget allows. Pure functions on scores; the CLI reads and writes the files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from monitor_gateway.schema import CATEGORIES


@dataclass(frozen=True, slots=True)
class Operating:
    threshold: float
    far: float | None
    mr: float | None


def pick_threshold(benign: Iterable[float], misbehavior: Iterable[float], max_far: float
                   ) -> Operating:
    """The lowest candidate threshold (a score seen, or 1.0) with FAR <= ``max_far``."""
    benign, misbehavior = sorted(benign), sorted(misbehavior)
    for threshold in sorted({*benign, *misbehavior, 1.0}):
        far = _share(benign, threshold)
        if far is None or far <= max_far:
            mr = None if not misbehavior else 1 - (_share(misbehavior, threshold) or 0.0)
            return Operating(threshold, far, mr)
    return Operating(1.0, _share(benign, 1.0), None)  # pragma: no cover - 1.0 always fits


def _share(scores: list[float], threshold: float) -> float | None:
    """The fraction of scores flagged at ``threshold`` (score >= threshold)."""
    if not scores:
        return None
    return sum(score >= threshold for score in scores) / len(scores)


def calibrate(samples_path: Path, max_far: float) -> dict[str, Operating]:
    """Per category and ``default`` (all samples), from a replay's ``.samples.jsonl``."""
    rows = [json.loads(line) for line in samples_path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("status", "ok") == "ok"]
    groups: dict[str, list[dict[str, object]]] = {"default": rows}
    groups.update({c: [r for r in rows if r["category"] == c] for c in CATEGORIES})
    return {
        name: pick_threshold([float(r["score"]) for r in group  # type: ignore[arg-type]
                              if r["label"] == "benign"],
                             [float(r["score"]) for r in group  # type: ignore[arg-type]
                              if r["label"] == "misbehavior"],
                             max_far)
        for name, group in groups.items() if group
    }
