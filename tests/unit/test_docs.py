"""The documentation: the site builds with every warning an error, the settings page lists
every setting the code reads, and the README stays the first hour."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from paths import ROOT
from pydantic_settings import BaseSettings

import monitor_gateway


def hooks() -> ModuleType:
    """``docs/hooks.py``, the MkDocs hook that writes the settings page's tables."""
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def settings_models() -> set[type[BaseSettings]]:
    """Every settings model the service defines, found by importing each of its modules
    (an adapter whose framework is not installed is left out: it reads no settings)."""
    for module in pkgutil.walk_packages(monitor_gateway.__path__, "monitor_gateway."):
        if module.name.endswith("__main__"):  # runs the command line
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:
            continue
    found: set[type[BaseSettings]] = set()
    waiting = [BaseSettings]
    while waiting:
        for model in waiting.pop().__subclasses__():
            waiting.append(model)
            if model.__module__.startswith("monitor_gateway."):
                found.add(model)
    return found


def test_the_site_builds_strict_without_fetching_anything(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link, a page missing from the navigation or a
    setting without a description fails the build."""
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"})
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    page = (tmp_path / "settings" / "index.html").read_text(encoding="utf-8")
    assert "MONITOR_GATEWAY_FAIL_POLICY" in page and "<!-- settings -->" not in page
    for html in tmp_path.rglob("*.html"):  # Material's web fonts are off: nothing online
        assert "fonts.googleapis.com" not in html.read_text(encoding="utf-8"), html


def test_the_settings_page_lists_every_setting_of_every_settings_model() -> None:
    reference = hooks().reference()
    models = settings_models()
    assert {m.__name__ for m in models} >= {"KafkaSettings", "GatewaySettings", "LLMSettings",
                                            "ClassifierSettings", "OfflineSettings"}
    for model in models:
        for name in model.model_fields:
            assert f"`MONITOR_GATEWAY_{name.upper()}`" in reference, (
                f"{model.__name__}.{name} is not on the settings page: add {model.__name__} "
                "to MODELS in docs/hooks.py")


def test_the_settings_page_names_each_flag_with_its_commands() -> None:
    reference = hooks().reference()
    row = next(line for line in reference.splitlines()
               if line.startswith("| `MONITOR_GATEWAY_METRICS_PORT`"))
    assert "`--metrics-port` (`demo`, `serve`)" in row and "`9464`" in row
    row = next(line for line in reference.splitlines()
               if line.startswith("| `MONITOR_GATEWAY_FAIL_POLICY`"))
    assert "`open`, `closed`" in row and "`--fail-policy` (`guard`, `serve`)" in row


def test_a_setting_without_a_description_fails_the_build() -> None:
    from pydantic_settings import SettingsConfigDict

    class Undescribed(BaseSettings):
        model_config = SettingsConfigDict(env_prefix="MONITOR_GATEWAY_")
        mystery: int = 1

    module = hooks()
    module.MODELS.append(("a model with an undescribed setting", Undescribed))
    with pytest.raises(ValueError, match=r"Undescribed\.mystery has no description"):
        module.reference()


def test_the_readme_is_the_first_hour() -> None:
    """At most about 300 lines; the reference is the site."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, len(lines)
