"""Monitor backends, one a module, all behind :class:`Monitor`."""

from __future__ import annotations

import importlib
from pathlib import Path

from ..config import load_config
from ..settings import GatewaySettings, SettingsError
from .base import Judgement, Monitor, Quote
from .cascade import CascadeMonitor, Step
from .classifier import ClassifierMonitor, LinearModel
from .rules import RulesMonitor

__all__ = ["ClassifierMonitor", "Judgement", "Monitor", "Quote", "RulesMonitor", "build_monitor"]

BUILT_IN = ("rules", "classifier", "openai", "cascade")


def build_monitor(settings: GatewaySettings) -> Monitor:
    """The monitor named by ``MONITOR``: a built-in name or a plugin ``package.module:factory``
    (a callable taking the settings and returning a Monitor)."""
    name = settings.monitor
    if name == "rules":
        return RulesMonitor()
    if name == "cascade":
        stages = load_config(settings.monitor_config).stage
        if not stages:
            raise SettingsError("MONITOR=cascade needs a --monitor-config file with [[stage]] "
                                "tables")
        if any(stage.monitor == "cascade" for stage in stages):
            raise SettingsError("a cascade stage cannot itself be a cascade")
        steps = [Step(build_monitor(settings.model_copy(update={"monitor": stage.monitor})),
                      stage.low, stage.high) for stage in stages]
        return CascadeMonitor(steps)
    if name == "openai":
        from .llm import LLMJudge

        return LLMJudge(settings)
    if name == "classifier":
        model = LinearModel.load(Path(settings.classifier_path))
        return ClassifierMonitor(model)
    if ":" not in name:
        raise SettingsError(
            f"MONITOR_GATEWAY_MONITOR: unknown monitor {name!r}; built in: {', '.join(BUILT_IN)}, "
            "or a plugin as 'package.module:factory'"
        )
    module_name, _, attr = name.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise SettingsError(
            f"MONITOR_GATEWAY_MONITOR: cannot load plugin {name!r}: {exc}"
        ) from None
    monitor = factory(settings)
    if not isinstance(monitor, Monitor):
        raise SettingsError(f"MONITOR_GATEWAY_MONITOR: {name!r} did not return a Monitor")
    return monitor
