"""Monitors by name: built-ins imported only when chosen, plugins through entry points or
``module:factory``, and each backend's settings read from the usual variables."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest
from monitors import Scripted

from monitor_gateway.monitors import RulesMonitor, build_monitor, registry
from monitor_gateway.settings import GatewaySettings, SettingsError


def test_a_built_in_is_built_by_name_and_others_are_not_imported() -> None:
    code = ("import sys; from monitor_gateway.monitors import build_monitor;"
            "from monitor_gateway.settings import GatewaySettings;"
            "build_monitor(GatewaySettings(monitor='rules'));"
            "assert 'monitor_gateway.monitors.llm' not in sys.modules, 'llm imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert isinstance(build_monitor(GatewaySettings(monitor="rules")), RulesMonitor)


def test_a_plugin_registered_as_an_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = EntryPoint(name="scripted", value="monitors:slow", group=registry.GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [plugin])
    assert "scripted" in registry.available()
    assert isinstance(build_monitor(GatewaySettings(monitor="scripted")), Scripted)


def test_a_plugin_named_by_module_and_factory() -> None:
    assert isinstance(build_monitor(GatewaySettings(monitor="monitors:slow")), Scripted)


@pytest.mark.parametrize(("name", "message"), [
    ("nonsense",
     "unknown monitor 'nonsense'; registered: rules, classifier, offline, openai, cascade"),
    ("monitors:missing", "cannot load 'monitors:missing'"),
    ("builtins:str", "did not return a Monitor"),
])
def test_a_bad_name_is_one_clear_line(name: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(")):
        build_monitor(GatewaySettings(monitor=name))


def test_the_llm_judge_reads_its_settings_from_the_usual_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("openai", reason="needs the llm extra")
    monkeypatch.setenv("MONITOR_GATEWAY_OPENAI_BASE_URL", "http://vllm:8000/v1")
    monkeypatch.setenv("MONITOR_GATEWAY_OPENAI_MODEL", "monitor-lora")
    monkeypatch.setenv("MONITOR_GATEWAY_TEMPLATE", "direct")
    judge = build_monitor(GatewaySettings(monitor="openai"))
    assert judge.card.model == "monitor-lora" and judge.card.template == "direct"
    assert judge.card.label == "LLM judge monitor-lora at vllm:8000, direct template"
    monkeypatch.setenv("MONITOR_GATEWAY_TEMPLATE", "verbose")
    with pytest.raises(SettingsError, match="MONITOR_GATEWAY_TEMPLATE"):
        build_monitor(GatewaySettings(monitor="openai"))
