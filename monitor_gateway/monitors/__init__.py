"""Monitor backends, one a module, all behind :class:`Monitor`, built by name through the
registry."""

from __future__ import annotations

from .base import Judgement, Monitor, Quote
from .classifier import ClassifierMonitor
from .registry import available, build_monitor
from .rules import RulesMonitor

__all__ = ["ClassifierMonitor", "Judgement", "Monitor", "Quote", "RulesMonitor", "available",
           "build_monitor"]
