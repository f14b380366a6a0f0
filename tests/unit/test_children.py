"""Child processes the tests start run this checkout's code wherever they start: in a git
worktree, the virtualenv's editable install is another checkout's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from paths import ROOT, TESTS, pythonpath

WHERE = "import monitor_gateway; print(monitor_gateway.__file__)"


def imported(code: str, cwd: Path, env: dict[str, str] | None = None) -> list[Path]:
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [Path(line) for line in done.stdout.splitlines()]


def test_a_child_with_the_tests_environment_imports_this_checkout(tmp_path: Path) -> None:
    """As ``python -m monitor_gateway ...`` children do, started from another directory
    with the environment as it is (the session's fixture put this checkout on it)."""
    assert imported(WHERE, tmp_path) == [ROOT / "monitor_gateway" / "__init__.py"]


def test_a_child_given_the_tests_folder_imports_this_checkout_and_it(tmp_path: Path) -> None:
    """As ``serve()`` of tests/kafka/test_process.py starts the gateway, with
    ``MONITOR_GATEWAY_MONITOR=monitors:slow`` from tests/."""
    env = {**os.environ, "PYTHONPATH": pythonpath(TESTS)}
    assert imported(WHERE + "; import monitors; print(monitors.__file__)", tmp_path, env) == [
        ROOT / "monitor_gateway" / "__init__.py", TESTS / "monitors.py"]
