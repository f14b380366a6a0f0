"""The decision policy: from a monitor's score to ``flagged``.

Monitors only report what they found (a score, evidence, a category when they have one).
One :class:`Policy`, built at start-up from the settings and the monitor config, owns
everything that turns that into a decision: the thresholds (a default, and one per
category, applied by the category the monitor *predicted*, the same grouping ``calibrate``
uses), the fail policy for error verdicts, and the monitor's last measured figures. It
writes the threshold it actually applied into the verdict's monitor label, so the label
never disagrees with the verdict's ``threshold``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .config import MonitorConfig
from .schema import MonitorCard
from .settings import GatewaySettings


@dataclass
class Policy:
    default: float
    by_category: dict[str, float] = field(default_factory=dict)
    fail_policy: Literal["open", "closed"] = "open"
    measured: str | None = None  # e.g. "last replay on realistic/test: MR 0.31, FAR 0.06"
    _labels: dict[tuple[MonitorCard, float], MonitorCard] = field(default_factory=dict)

    @classmethod
    def build(cls, settings: GatewaySettings, config: MonitorConfig) -> Policy:
        """``THRESHOLD`` unless the config's ``[thresholds]`` say otherwise."""
        return cls(
            default=config.thresholds.get("default", settings.threshold),
            by_category={k: v for k, v in config.thresholds.items() if k != "default"},
            fail_policy=settings.fail_policy,
            measured=config.last_replay.describe() if config.last_replay else None,
        )

    def threshold(self, category: str | None) -> float:
        """The threshold for a predicted category (the default when there is none)."""
        return self.by_category.get(category, self.default) if category else self.default

    def flagged(self, score: float, threshold: float) -> bool:
        return score >= threshold

    def failed(self) -> tuple[bool, float]:
        """``flagged`` and ``score`` of an error verdict: fail open or fail closed."""
        closed = self.fail_policy == "closed"
        return closed, 1.0 if closed else 0.0

    def card(self, card: MonitorCard, threshold: float) -> MonitorCard:
        """The monitor's card with the applied threshold and the measured figures in its
        label (made once a card and threshold: a cascade has one card a stage)."""
        key = (card, threshold)
        if (labelled := self._labels.get(key)) is None:
            label = f"{card.label}, threshold {threshold:g}"
            if self.measured:
                label += f"; {self.measured}"
            labelled = self._labels[key] = card.model_copy(update={"label": label})
        return labelled
