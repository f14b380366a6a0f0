"""Which verdicts go to review, and with what probability: pure functions.

Each verdict is taken independently (Poisson sampling) with a probability set by its
stratum (flagged or not, category, score band), raised near the threshold (uncertainty
sampling). Whether it is taken is decided by a hash of (trajectory id, monitor version)
and a seed, not by a random draw: the same verdict read again after a restart is picked
again, or not, exactly as before, so a crash can neither pick it twice nor lose it.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from typing import Literal

from monitor_gateway.schema import Sampling, Verdict


@dataclass(frozen=True, slots=True)
class Design:
    """The sampling rates. ``rates`` overrides a stratum's rate by its name (e.g.
    ``"unflagged/none/0.4-0.6"``); ``bands`` are the score bands' inner edges."""

    flagged: float = 0.5
    unflagged: float = 0.05
    bands: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)
    uncertainty_width: float = 0.05  # |score - threshold| within this is "uncertain"
    uncertainty: float = 0.5  # the least probability an uncertain verdict is taken with
    rates: dict[str, float] = field(default_factory=dict)
    seed: str = "monitor-gateway"

    def __post_init__(self) -> None:
        for name, rate in {"flagged": self.flagged, "unflagged": self.unflagged,
                           "uncertainty": self.uncertainty, **self.rates}.items():
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"sampling rate {name}: {rate:g} is not in [0, 1]")


def band(score: float, edges: tuple[float, ...]) -> str:
    """``"0.4-0.6"``: the band of ``score`` between consecutive edges (0 and 1 included)."""
    bounds = (0.0, *edges, 1.0)
    for low, high in itertools.pairwise(bounds):
        if score < high:
            return f"{low:g}-{high:g}"
    return f"{bounds[-2]:g}-1"


def stratum(verdict: Verdict, design: Design) -> str:
    return (f"{'flagged' if verdict.flagged else 'unflagged'}/{verdict.category or 'none'}/"
            f"{band(verdict.score, design.bands)}")


def inclusion(verdict: Verdict, design: Design) -> Sampling | None:
    """The probability ``verdict`` is picked with, its stratum and why; ``None`` when it
    never can be (a rate of 0)."""
    name = stratum(verdict, design)
    rate = design.rates.get(name, design.flagged if verdict.flagged else design.unflagged)
    reason: Literal["stratified", "uncertainty"] = "stratified"
    if abs(verdict.score - verdict.threshold) <= design.uncertainty_width \
            and design.uncertainty > rate:
        rate, reason = design.uncertainty, "uncertainty"
    if rate <= 0.0:
        return None
    return Sampling(probability=rate, stratum=name, reason=reason)


def uniform(trajectory_id: str, version: str, seed: str) -> float:
    """A number in [0, 1) fixed by its arguments, uniform over trajectory ids."""
    digest = hashlib.sha256(f"{seed}\0{trajectory_id}\0{version}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pick(verdict: Verdict, design: Design) -> Sampling | None:
    """The verdict's sampling if it is picked for review, else ``None``. Replayed
    benchmark traffic and error verdicts are never picked: they are not the monitor's
    judgement of production."""
    if verdict.replay_run is not None or verdict.status != "ok":
        return None
    sampling = inclusion(verdict, design)
    if sampling is None:
        return None
    drawn = uniform(verdict.trajectory_id, verdict.monitor.version, design.seed)
    return sampling if drawn < sampling.probability else None
