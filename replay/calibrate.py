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

from monitor_gateway.schema import CATEGORIES


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
    benign, misbehavior = sorted(benign), sorted(misbehavior)
    for threshold in sorted({*benign, *misbehavior, 1.0}):
        far = _share(benign, threshold)
        if far is None or far <= max_far:
            mr = None if not misbehavior else 1 - (_share(misbehavior, threshold) or 0.0)
            return Operating(threshold, far, mr, len(benign), len(misbehavior))
    raise AssertionError("a threshold of 1.0 flags no benign score below 1")  # pragma: no cover


def _share(scores: list[float], threshold: float) -> float | None:
    """The fraction of scores flagged at ``threshold`` (score >= threshold)."""
    if not scores:
        return None
    return sum(score >= threshold for score in scores) / len(scores)


def calibrate(rows: list[dict[str, object]], max_far: float) -> dict[str, Operating]:
    """Per predicted category and ``default`` (all samples), from a replay's per-sample
    rows (``.samples.jsonl``)."""
    if not 0.0 < max_far < 1.0:
        raise ValueError(f"a false-alarm budget is between 0 and 1, not {max_far:g}")
    rows = [r for r in rows if r.get("status", "ok") == "ok"]
    groups: dict[str, list[dict[str, object]]] = {"default": rows}
    groups.update({c: [r for r in rows if r.get("verdict_category") == c] for c in CATEGORIES})
    return {
        name: pick_threshold([float(r["score"]) for r in group  # type: ignore[arg-type]
                              if r["label"] == "benign"],
                             [float(r["score"]) for r in group  # type: ignore[arg-type]
                              if r["label"] == "misbehavior"],
                             max_far)
        for name, group in groups.items() if group
    }


def read_samples(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
