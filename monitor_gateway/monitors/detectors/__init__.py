"""Structural detectors: each reads only what the agent did (``parts``) and returns signals
with the exact text behind them; ``detect`` runs them all."""

from __future__ import annotations

from ...schema import Trajectory
from . import claims, code, edits, messages, shell, stance, sway
from .parts import Part, Signal, parts

DETECTORS = (shell, code, edits, messages, sway, stance, claims)
# the detectors that can judge a step alone, before its run ends (each module's STEPWISE)
STEPWISE = tuple(module for module in DETECTORS if module.STEPWISE)


def detect(trajectory: Trajectory, done: list[Part] | None = None, step: bool = False
           ) -> list[Signal]:
    """Every detector's signals, decisive ones first (with ``step``, only those that can
    judge a step alone). The agent's output is split into parts once (``done``, when the
    caller has them), and every detector reads the same parts."""
    done = parts(trajectory) if done is None else done
    found = [signal for module in (STEPWISE if step else DETECTORS)
             for signal in module.detect(trajectory, done)]
    found.sort(key=lambda s: not s.decisive)
    return found
