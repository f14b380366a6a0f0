"""How a trajectory is split into the typed parts detectors read: a file a command's
heredoc writes is that file written whole."""

from __future__ import annotations

import ast
import warnings

import pytest

from monitor_gateway.monitors.detectors import detect
from monitor_gateway.monitors.detectors.parts import parse_python, parsed_once, parts
from monitor_gateway.schema import Trajectory


def _ran(command: str) -> Trajectory:
    return Trajectory.model_validate({
        "id": "t", "request": "Fix it.", "response": "Done.",
        "steps": [{"role": "assistant", "content": "",
                   "tool_calls": [{"name": "bash", "arguments": {"cmd": command}}]},
                  {"role": "tool", "content": ""}]})


@pytest.mark.parametrize(("command", "path", "text"), [
    ("cd /srv/shop && cat > shop/text.py <<'EOF'\ndef slug(t):\n    return t\nEOF\n"
     "pytest -q", "shop/text.py", "def slug(t):\n    return t\n"),
    ("cat <<EOF >> notes/todo.md\n- ship it\nEOF", "notes/todo.md", "- ship it\n"),
    ("tee -a conf/app.ini <<-END >/dev/null\n\tdebug = false\n\tEND\n", "conf/app.ini",
     "\tdebug = false\n"),
], ids=["cat-redirect", "redirect-after", "tee-indented-closer"])
def test_a_file_a_heredoc_writes_is_a_file_part(command: str, path: str, text: str) -> None:
    files = [(part.path, part.text) for part in parts(_ran(command)) if part.kind == "file"]
    assert files == [(path, text)]


@pytest.mark.parametrize("command", [
    "cat > cleanup.sh <<'EOF'\nrm -rf build\nEOF",  # a script: the command's own lines
    "psql -d shop <<SQL 2>&1\nSELECT 1;\nSQL",  # given to a program, not written
    "cat > /dev/null <<EOF\nx\nEOF",
], ids=["script", "to-a-program", "dev-null"])
def test_a_heredoc_no_file_keeps_is_no_file_part(command: str) -> None:
    assert not [part for part in parts(_ran(command)) if part.kind == "file"]


def test_the_detectors_share_a_sources_tree_and_leave_it_as_parsed() -> None:
    """Every detector reads one tree a source in a judgement (``parsed_once``): none may
    change it, or the detectors after it would read other code."""
    code = ("import subprocess\nimport xml.etree.ElementTree as ET\nfrom flask import request\n\n"
            "def run(name):\n    subprocess.run(f'ls {name}', shell=True)\n"
            "    return ET.fromstring(request.data)\n")
    trajectory = Trajectory.model_validate({
        "id": "t", "request": "Add a handler.", "response": "Done.",
        "steps": [{"role": "assistant", "content": "", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "app.py", "content": code}}]}]})
    with parsed_once():
        found = detect(trajectory)
        tree = parse_python(code)
        assert tree is not None and parse_python(code) is tree
    assert {s.name for s in found} >= {"code.shell_injection", "code.bandit"}
    fresh = parse_python(code)
    assert fresh is not None and fresh is not tree
    assert ast.dump(tree, include_attributes=True) == ast.dump(fresh, include_attributes=True)
    assert not any(hasattr(node, "_bandit_parent") for node in ast.walk(tree))
    assert detect(trajectory) == found


def test_the_agents_code_parsed_warns_nothing_on_our_stderr() -> None:
    """An invalid escape sequence in the agent's code is its code's fault: parsing it for
    the checks raises no warning of ours (Python 3.12 prints a SyntaxWarning by default)."""
    trajectory = Trajectory(id="t", request="Split the log lines.", response=(
        "```python\nimport re\n\nFIELDS = re.compile(\"\\|\")\nprint(FIELDS.split(line))\n```"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        detect(trajectory)
    assert [str(w.message) for w in caught] == []
