"""Shell commands as a shell reads them, parsed with ``shlex`` rather than pattern-matched:
logical lines, simple commands with what each pipes into, the wrappers before the real
program dropped (``sudo``, ``env``, ``timeout``), and the commands run inside another
(``ssh host '...'``, ``bash -c``, ``python -c`` through ``subprocess``, ``xargs``,
``kubectl exec``, ``docker exec``). The shell family's checks read these; so do the
offline monitor's acts (a nested command is an act of its own).
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

from .parts import parse_python

_SEPARATORS = {"|", "||", "&&", ";", "&", "|&"}
_PYTHON = re.compile(r"python(?:\d(?:\.\d{1,2})?)?")
# what runs a shell command from Python: subprocess's calls, os.system and os.popen
_RUNS = {"run", "call", "check_call", "check_output", "Popen", "system", "popen", "getoutput",
         "getstatusoutput"}
_WRAPPERS = {"sudo", "nohup", "time", "timeout", "env", "nice", "exec", "command", "doas", "npx"}
_NESTED = {"ssh", "bash", "sh", "zsh"}


@dataclass(frozen=True, slots=True)
class Command:
    argv: list[str]
    piped_to: list[str]
    written: list[str]  # as written, with its variable assignments and wrappers


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Logical lines: backslash continuations joined, offsets of their first character."""
    start = 0
    for match in re.finditer(r"(?<!\\)\n", text):
        yield start, text[start:match.start()]
        start = match.end()
    yield start, text[start:]


def commands(line: str) -> Iterator[Command]:
    """Each simple command of a shell line, with what it pipes into; nested command strings
    (``ssh host '...'``, ``bash -c '...'``, ``sudo``, ``xargs``) are unwrapped."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: read it as plain words
        tokens = line.split()
    segments: list[list[str]] = [[]]
    pipes: list[bool] = []
    for token in tokens:
        if token in _SEPARATORS:
            pipes.append(token in ("|", "|&"))
            segments.append([])
        else:
            segments[-1].append(token)
    for index, segment in enumerate(segments):
        argv = _unwrap(segment)
        if not argv:
            continue
        piped = pipes[index] if index < len(pipes) else False
        after = _unwrap(segments[index + 1]) if piped else []
        yield Command(argv, after, segment)
        for nested in _nested(argv):
            yield from commands(nested)


def nested(text: str) -> Iterator[str]:
    """The command strings the text's commands run inside another (``ssh host '...'``,
    ``bash -c '...'``, ``python -c`` through ``subprocess``, ``kubectl exec --``)."""
    for _, line in logical_lines(text):
        for command in commands(line):
            yield from _nested(command.argv)


def python_programs(text: str) -> Iterator[str]:
    """The programs the text's commands give Python to run (``python3 -c "..."``): code
    the code family reads as it reads a file written."""
    for _, line in logical_lines(text):
        for command in commands(line):
            argv = command.argv
            if _PYTHON.fullmatch(argv[0].rsplit("/", 1)[-1]) and "-c" in argv[1:-1]:
                yield argv[argv.index("-c") + 1]


def _unwrap(argv: list[str]) -> list[str]:
    """Drop ``sudo -u x``, ``env X=1``, ``timeout 5``, ``npx`` and variable assignments
    before the real program."""
    i = 0
    while i < len(argv):
        word, before = argv[i], argv[i - 1] if i else ""
        if word in _WRAPPERS or ("=" in word and not word.startswith("-")) or \
                (word.startswith("-") and argv[0] in _WRAPPERS) or \
                (word.isdigit() and before == "timeout") or \
                (before in ("-u", "-g") and argv[0] == "sudo"):
            i += 1
            continue
        break
    return argv[i:]


def _nested(argv: list[str]) -> Iterator[str]:
    program = argv[0].rsplit("/", 1)[-1]
    if _PYTHON.fullmatch(program) and "-c" in argv[1:-1]:
        yield from _run_by_python(argv[argv.index("-c") + 1])
    elif program in _NESTED:
        if program == "ssh":
            rest = [a for a in argv[1:] if not a.startswith("-")]
            if len(rest) >= 2:
                yield " ".join(rest[1:])
        elif "-c" in argv[1:-1]:
            yield argv[argv.index("-c") + 1]
    elif program == "kubectl" and "exec" in argv and "--" in argv:
        yield shlex.join(argv[argv.index("--") + 1:])
    elif program == "docker" and argv[1:2] == ["exec"]:
        i = 2  # past the options (those that take a value, with it) and the container
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in ("-e", "--env", "-u", "--user", "-w", "--workdir") else 1
        if i + 1 < len(argv):
            yield shlex.join(argv[i + 1:])
    elif program == "xargs":
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in ("-I", "-n", "-P", "-d", "-L") else 1
        if i < len(argv):
            yield shlex.join(argv[i:])


def _run_by_python(code: str) -> Iterator[str]:
    """The shell commands a ``python -c`` script runs (``subprocess.run("...", shell=True)``,
    ``subprocess.run(["rm", "-rf", ...])``, ``os.system("...")``): the same act in another
    interpreter."""
    tree = parse_python(code)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _RUNS:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value
            elif isinstance(first, ast.List | ast.Tuple) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts):
                yield shlex.join(str(e.value) for e in first.elts)  # type: ignore[attr-defined]


def option_values(words: list[str]) -> dict[str, str]:
    """Each option's value, written ``--name value`` or ``--name=value`` (``-o yaml``,
    ``-o=yaml``); every word is taken as a possible name, so a word also keys the next."""
    return dict(pairwise(words)) | dict(
        w.split("=", 1) for w in words if w.startswith("-") and "=" in w)


@dataclass(frozen=True, slots=True)
class EachListed:
    """A command run once for each item another command listed: ``for x in $(list); do
    ...; done``, ``list | while read x; do ...; done``, ``list | xargs ...``. ``at``: where
    it starts in the text."""

    listing: str
    body: str
    at: int


_FOR_LISTED = re.compile(r"\bfor\s{1,3}\w{1,40}\s{1,3}in\s{1,3}(?:\$\(|`)"
                         r"(?P<listing>[^\n`]{1,800}?)[)`]\s{0,3}[;\n]\s{0,20}do\b"
                         r"(?P<body>.{1,2000}?)\bdone\b", re.S)
_PIPED_LOOP = re.compile(r"\|\s{0,3}(?:while\s{1,3}(?:IFS=\S{0,10}\s{1,3})?read\s{1,3}"
                         r"(?:-r\s{1,3})?\w{1,40}\s{0,3}[;\n]\s{0,20}do\b(?P<body>.{1,2000}?)"
                         r"\bdone\b|(?P<xargs>xargs\b[^;&|\n]{1,800}))", re.S)
# what a listing may name and still list every item: where (a repository, a project, a
# namespace), how (its output's format, pages, ids alone), and the items' open state; any
# other option (a severity, an age, a label, a cap) or a filter it pipes through (grep,
# jq's select) narrows it to some
_SCOPE = frozenset(("repo", "r", "org", "owner", "project", "p", "team", "queue", "board",
                    "space", "namespace", "n", "workspace", "paginate", "page", "per-page",
                    "per_page", "format", "o", "output", "json", "jq", "q", "columns", "fields",
                    "quiet", "ids", "ids-only", "id-only", "plain", "no-header", "mine", "all",
                    "a", "x", "method", "h", "header", "state", "status"))
_OPEN = frozenset(("open", "opened", "active", "unresolved", "new", "pending", "triggered",
                   "firing", "all"))
_FILTERS = re.compile(r"\b(?:grep|egrep|awk|sed|head|tail)\b|\bselect\s{0,3}\(", re.I)


def each_listed(text: str) -> Iterator[EachListed]:
    """Each loop in a shell text that runs a command once for each item a listing gave."""
    for found in _FOR_LISTED.finditer(text):
        yield EachListed(found.group("listing"), found.group("body"), found.start())
    for found in _PIPED_LOOP.finditer(text):  # the listing: back to the command's start
        start = max((at + len(mark) for mark in (";", "&", "\n", "$(", "`")
                     if (at := text.rfind(mark, 0, found.start())) >= 0), default=0)
        listing = text[start:found.start()]
        yield EachListed(listing, found.group("body") or found.group("xargs"),
                         start + len(listing) - len(listing.lstrip()))


def narrows(name: str, value: object) -> bool:
    """Whether a listing's option (or a keyword of an SDK's listing call) selects some of
    the items rather than all of them (see ``_SCOPE``)."""
    name = name.lstrip("-").lower()
    if name in ("state", "status"):
        return str(value).strip("'\"").lower() not in _OPEN
    return name not in _SCOPE


def lists_every(listing: str) -> bool:
    """Whether a listing command lists every item: no option of it narrows (see
    ``_SCOPE``) and nothing it pipes through filters."""
    if _FILTERS.search(listing):
        return False
    for command in commands(listing):
        words = command.argv[1:]
        for i, word in enumerate(words):
            if word.startswith("-") and word != "-":
                name, equals, value = word.partition("=")
                following = words[i + 1] if i + 1 < len(words) else ""
                if narrows(name, value if equals else following):
                    return False
    return True


def over_every(text: str, act: re.Pattern[str]) -> int | None:
    """Where a command in a shell text does ``act`` to every item: with a selector of all
    (``--all``), or in a loop over a listing that lists every item (``for id in $(alerts
    list --ids); do alerts dismiss $id; done``, ``... | xargs -n1 ... dismiss``). A loop over
    ids written out, or over a listing narrowed by an option or a filter, is the items
    chosen, as is a loop whose body tests each item first: None."""
    for line_at, line in logical_lines(text) if "--all" in text else ():
        for command in commands(line):
            if "--all" in command.argv and any(act.search(word) for word in command.argv):
                return line_at + max(0, line.find(command.written[0]))
    for loop in each_listed(text):
        if act.search(loop.body) and not _TESTS.search(loop.body) and \
                lists_every(loop.listing):
            return loop.at
    return None


# a loop's body that tests each item before it acts (``if``, ``[ ... ]``, ``test``): the
# items are chosen
_TESTS = re.compile(r"\b(?:if|test|continue)\b|\[\[?\s", re.I)
