"""Every example in the README and the documentation runs as written.

Each ``sh`` and ``python`` block is run in the order a reader meets it (the README, then
the site's pages in their navigation order), from one working directory where ``.venv`` is
this virtualenv, against the gateway the README's first verdict starts (its block is
marked ``<!-- example: gateway -->``): the embedded broker and the offline monitor, on a
free port given as ``MONITOR_GATEWAY_KAFKA_BOOTSTRAP``. A block may be marked
``<!-- example: skip (why) -->``, with its reason, when it cannot run here (a real
cluster, a GPU, minutes of replay)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from paths import ROOT

from monitor_gateway.embedded import free_port

pytestmark = pytest.mark.kafka

PAGES = ["README.md", *(f"docs/{page}" for page in (
    "index.md", "quickstart.md", "messages.md", "contract.md", "settings.md", "monitors.md",
    "benchmarks.md", "review.md", "operations.md", "adapters.md", "guard.md",
    "extending.md", "checks.md", "steps.md"))]
RUN = {"sh": ["bash", "-euo", "pipefail", "-c"], "python": [sys.executable, "-c"]}
BLOCK = re.compile(r"(?:^<!-- example: (?P<mark>.*?) -->\n)?^```(?P<language>\w*)\n"
                   r"(?P<code>.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Example:
    where: str  # file:line
    language: str
    code: str
    mark: str | None


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        for block in BLOCK.finditer(text):
            line = text.count("\n", 0, block.start("language")) + 1
            found.append(Example(f"{page}:{line}", block["language"], block["code"],
                                 block["mark"]))
    return found


RUNNABLE = [e for e in examples() if e.language in RUN]


def test_every_runnable_example_is_run_or_says_why_not() -> None:
    """The pages are all read (the site's navigation lists no other), and every mark is a
    gateway or a skip with its reason."""
    listed = re.findall(r":\s*([\w-]+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert sorted(f"docs/{page}" for page in listed
                  if "log" not in page) == sorted(PAGES[1:])
    assert [e.where.split(":")[0] for e in RUNNABLE if e.mark == "gateway"] == ["README.md"]
    for example in RUNNABLE:
        assert example.mark in (None, "gateway") or re.fullmatch(r"skip \(.{10,}\)",
                                                                  example.mark), example.where
        # what a reader installs is theirs to run, never this test's
        assert example.mark or not re.search(r"(?m)^\s*pip3? install", example.code), \
            example.where
    ran = {e.where.split(":")[0] for e in RUNNABLE if e.mark is None}
    assert {"README.md", "docs/quickstart.md", "docs/adapters.md", "docs/benchmarks.md",
            "docs/guard.md", "docs/extending.md"} <= ran


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A reader's working directory and environment, with the README's gateway running."""
    work = tmp_path_factory.mktemp("reader")
    (work / ".venv").symlink_to(Path(sys.prefix))
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("MONITOR_GATEWAY_")}
    env |= {"MONITOR_GATEWAY_KAFKA_BOOTSTRAP": f"127.0.0.1:{free_port()}",
            "MONITOR_GATEWAY_METRICS_PORT": "0", "COLUMNS": "200"}
    (gateway,) = [e for e in RUNNABLE if e.mark == "gateway"]
    log = (work / "gateway.log").open("w")
    serving = subprocess.Popen([*RUN[gateway.language], gateway.code], cwd=work, env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "gateway consuming" not in (work / "gateway.log").read_text():
            assert serving.poll() is None, (work / "gateway.log").read_text()
            assert time.monotonic() < deadline, (work / "gateway.log").read_text()
            time.sleep(0.2)
        yield work, env
    finally:
        serving.terminate()
        serving.wait(30)
        log.close()


@pytest.mark.parametrize("example", [e for e in RUNNABLE if e.mark is None],
                         ids=lambda e: e.where)
def test_the_example_runs_as_written(example: Example,
                                     reader: tuple[Path, dict[str, str]]) -> None:
    work, env = reader
    done = subprocess.run([*RUN[example.language], example.code], cwd=work, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"{example.where}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
