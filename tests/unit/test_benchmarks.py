"""The benchmarks import: they are run by hand, not by CI, so stale imports would go unseen
(and the LLM outage test runs the benchmarks' stub server)."""

from __future__ import annotations

import importlib
import sys

import pytest
from paths import ROOT

BENCHMARKS = ROOT / "benchmarks"


@pytest.mark.parametrize("name", ["throughput", "llm_throughput", "offline", "soak", "steps",
                                  "broker_fetch"])
def test_the_benchmark_imports(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    module = importlib.import_module(name)
    assert callable(module.main)
    sys.modules.pop(name, None)
