"""Monitors by name: the built-in backends, plugins installed under the
``monitor_gateway.monitors`` entry point group, or ``package.module:factory`` given as is.

A factory takes the gateway's settings and returns a :class:`Monitor`, reading its own
backend's settings itself. Factories are named by ``module:attr`` strings and imported only
when chosen, so the service starts without the dependencies of backends it does not use.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

from ..settings import GatewaySettings, SettingsError
from .base import Factory, HeavyMonitor, InlineMonitor, Monitor

GROUP = "monitor_gateway.monitors"
BUILT_IN = {
    "rules": "monitor_gateway.monitors.rules:from_settings",
    "classifier": "monitor_gateway.monitors.classifier:from_settings",
    "offline": "monitor_gateway.monitors.offline:from_settings",
    "openai": "monitor_gateway.monitors.llm:from_settings",
    "cascade": "monitor_gateway.monitors.cascade:from_settings",
}


def available() -> dict[str, str]:
    """Every monitor name and the factory it stands for: built-ins, then plugins."""
    return BUILT_IN | {entry.name: entry.value for entry in entry_points(group=GROUP)}


def build_monitor(settings: GatewaySettings) -> Monitor:
    """The monitor ``MONITOR`` names: a registered name or ``package.module:factory``."""
    name = settings.monitor
    target = available().get(name, name if ":" in name else None)
    if target is None:
        raise SettingsError(f"unknown monitor {name!r}; registered: {', '.join(available())}, "
                            "or a plugin as 'package.module:factory'", "monitor")
    module_name, _, attr = target.partition(":")
    try:
        factory: Factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise SettingsError(f"cannot load {name!r}: {exc}", "monitor") from None
    monitor = factory(settings)
    if not isinstance(monitor, Monitor):
        raise SettingsError(f"{name!r} did not return a Monitor", "monitor")
    workers = settings.workers
    if workers is None:
        heavy = isinstance(monitor, HeavyMonitor) and monitor.heavy
        workers = default_workers() if heavy else 0
    if workers and isinstance(monitor, InlineMonitor):
        from .pool import PooledMonitor  # it judges with the gateway's calling module

        return PooledMonitor(monitor, build_monitor, settings, workers)
    return monitor


def default_workers(most: int = 4) -> int:
    """One worker a core this process may run on, at most ``most``: each holds its own copy
    of the monitor."""
    return max(1, min(most, len(os.sched_getaffinity(0))))
