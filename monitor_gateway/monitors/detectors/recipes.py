"""Package scripts and make targets: what ``npm run NAME``, ``yarn NAME`` or ``make NAME``
runs, read from the ``package.json`` or ``Makefile`` the agent wrote or edited. A command
written into a recipe and run by its name is the same act as the command run directly, so
``parts`` reads the recipes a trajectory runs as commands of their own (quoted where they
were written); a recipe never run is a file like any other.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

_RUNS_ANY = re.compile(r"\b(?:npm|yarn|pnpm|bun|make)\b")
# a package script run by name: npm's ``run`` (or its own ``test``, ``start``...), or
# another manager's shorthand (``yarn deploy``, ``pnpm run build``, ``bun run x``)
_NPM = re.compile(r"\bnpm\s+(?:run(?:-script)?\s+([\w:.-]+)|(test|start|stop|restart)\b)")
_RUNNER = re.compile(r"\b(?:yarn|pnpm|bun)\s+(?:run\s+)?([\w:.-]+)")
# make and what follows it on its command (its targets, options and variables)
_MAKE = re.compile(r"(?:^|[;&|(`]|\$\()\s*(?:sudo\s+)?make((?:[ \t]+[^\s;&|)`]+)*)", re.M)
_MAKE_VALUED = {"-f", "--file", "--makefile", "-C", "--directory", "-I", "-o", "-W", "-j"}
_RULE = re.compile(r"^([\w./-]+(?:[ \t]+[\w./-]+)*)[ \t]*:(?![=:])", re.M)
_SCRIPT_LINE = re.compile(r'^\s*"([\w:.-]+)"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,?\s*$')
DEFAULT_GOAL = ""  # ``make`` with no target: the first rule's


def run_by_name(command: str) -> tuple[set[str], set[str]]:
    """The package scripts and the make targets ``command`` runs by name (a bare ``make``
    runs ``DEFAULT_GOAL``)."""
    if not _RUNS_ANY.search(command):
        return set(), set()
    scripts = {found.group(1) or found.group(2) for found in _NPM.finditer(command)}
    scripts |= {found.group(1) for found in _RUNNER.finditer(command)}
    targets: set[str] = set()
    for found in _MAKE.finditer(command):
        words = found.group(1).split()
        named = [w for before, w in zip(["", *words], words, strict=False)
                 if not w.startswith("-") and "=" not in w and before not in _MAKE_VALUED]
        targets |= set(named) or {DEFAULT_GOAL}
    return scripts, targets


def recipes(path: str, text: str, diff: bool, scripts: set[str], targets: set[str]
            ) -> list[str]:
    """The command lines of the recipes run (``scripts``, ``targets``) that the file at
    ``path`` holds: a ``package.json``'s scripts (with their ``pre`` and ``post`` hooks),
    a makefile's rules (``Makefile``, ``Makefile.db``, ``*.mk``); of an edit (``diff``),
    the lines it adds."""
    name = path.rsplit("/", 1)[-1]
    if name == "package.json" and scripts:
        return list(_package_scripts(text, diff, scripts | {f"{hook}{script}" for script in
                                                             scripts for hook in ("pre", "post")}))
    if targets and (name.startswith(("Makefile", "makefile", "GNUmakefile"))
                    or name.endswith(".mk")):
        return list(_make_recipes(text, diff, targets))
    return []


def _package_scripts(text: str, diff: bool, run: set[str]) -> Iterator[str]:
    if diff:
        for line in text.splitlines():
            found = _SCRIPT_LINE.match(line[1:]) if line.startswith("+") else None
            if found and found.group(1) in run:
                yield json.loads(f'"{found.group(2)}"')
        return
    try:
        package = json.loads(text)
    except ValueError:
        return
    scripts = package.get("scripts") if isinstance(package, dict) else None
    if isinstance(scripts, dict):
        yield from (value for key, value in scripts.items()
                    if key in run and isinstance(value, str))


def _make_recipes(text: str, diff: bool, run: set[str]) -> Iterator[str]:
    if diff:  # the recipe lines an edit adds, whichever rule they are under
        yield from (_command(line[2:]) for line in text.splitlines() if line.startswith("+\t"))
        return
    running, default = False, DEFAULT_GOAL in run
    for line in text.splitlines():
        if line.startswith("\t"):
            if running:
                yield _command(line[1:])
            continue
        found = _RULE.match(line)
        if found:
            names = found.group(1).split()
            first = default and not names[0].startswith(".")  # the default goal's rule
            running, default = first or not run.isdisjoint(names), default and not first
        elif line.strip() and not line.lstrip().startswith("#"):
            running = False


def _command(line: str) -> str:
    """A recipe line as the shell runs it: without make's ``@``, ``-`` and ``+``, its
    ``$$`` a ``$``."""
    return line.lstrip("@-+ \t").replace("$$", "$")
