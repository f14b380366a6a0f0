"""Where evidence can be: the agent's own output cut into units a reviewer reads alone.

A unit is one act (a tool call's command, code, query, diff or file written, code the
agent wrote in a fence, or a command run inside another), or one text of what it said: to
the user (its response, and a message it sent through a tool: the same answer either way)
or to itself (its steps' prose). The offline monitor weighs each act by its own words, and
what the agent said only through the detectors' findings placed in it.

What a unit reads is the same whichever form carried it: the value of a file write's
``content`` and the body of a fence, an edit's ``old_str``/``new_str`` and a diff, a message
tool's ``text`` and the response (``detectors.parts`` does that typing).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from ..schema import Trajectory
from .base import Quote
from .classifier import TOKEN
from .detectors.parts import Part, parts
from .detectors.shellparse import nested

Kind = Literal["r", "s", "t"]  # told someone; told itself; did
_WORD = re.compile(r"\w")
MAX_UNIT = 4000  # the characters of one act read: a huge file write costs no more


@dataclass(frozen=True, slots=True)
class Unit:
    """One place evidence can be. ``part`` is the typed piece of output it comes from;
    ``start``/``end`` are its span in the part's text."""

    kind: Kind
    part: Part
    start: int
    end: int
    unquoted: str | None = None  # what it reads where that is not verbatim in the span

    @property
    def text(self) -> str:
        return self.part.text[self.start:self.end] if self.unquoted is None else self.unquoted

    def quote(self) -> Quote:
        """The unit as evidence: its line where it is long."""
        if self.end - self.start > 240:
            return self.part.line_at(self.start)
        return self.part.quote(self.start, self.end)

    def covers(self, quote: Quote) -> bool:
        """Whether ``quote`` (a detector's finding, or a gold span) lies in this unit."""
        if quote.source != self.part.source:
            return False
        if quote.start is not None and not self.part.escaped:
            at = quote.start - self.part.base
            return at < self.end and self.start < at + max(1, len(quote.text))
        return bool(quote.text) and quote.text in self.part.quote(self.start, self.end).text


def units(trajectory: Trajectory, done: list[Part] | None = None) -> list[Unit]:
    """The agent's output as units, in reading order."""
    out: list[Unit] = []
    for part in parts(trajectory) if done is None else done:
        if part.kind in ("say", "message"):
            kind: Kind = "r" if part.kind == "message" or part.source == "response" else "s"
            out.append(Unit(kind, part, 0, len(part.text)))
        elif part.text.strip():
            start = _acts_from(part) if part.kind == "command" else 0
            out.append(Unit("t", part, start, min(len(part.text), start + MAX_UNIT)))
            if part.kind == "command":
                out.extend(_inner(part))
    return out


# a script's line that only says where, or how, the lines after it run: ``cd pkg``,
# ``pushd build``, ``set -euo pipefail``; blank lines and comments
_SETUP_LINE = re.compile(r"\s*(?:(?:cd|pushd)\s+\S+|set\s+-[\w-]+(?:\s+\w+)?|#.*)?\s*")


def _acts_from(part: Part) -> int:
    """Where a command's first acting line starts: a script that opens by moving to its
    directory (``cd pkg`` then ``npm publish``) weighs the publish as the same command run
    alone; where no line acts, the whole."""
    at = 0
    for line in part.text[:MAX_UNIT].split("\n"):
        if not _SETUP_LINE.fullmatch(line[part.lead:] if at == 0 else line):
            return at
        at += len(line) + 1
    return 0


def _inner(part: Part) -> Iterator[Unit]:
    """A command run inside another (through ``ssh``, ``bash -c``, ``python -c``) as an
    act of its own: the same act however it is wrapped. Where quoting changed its text, it
    is read unquoted and quoted as the whole command."""
    text = part.text[:MAX_UNIT]
    for script in dict.fromkeys(nested(text)):
        at = text.find(script)
        if not script.strip() or len(script) >= len(text):
            continue
        yield Unit("t", part, at, at + len(script)) if at >= 0 else \
            Unit("t", part, 0, len(text), unquoted=script[:MAX_UNIT])


# what code names itself, in the languages agents write most: a function and its
# parameters, a variable assigned (spaced, so a call's keyword on its own line, "shell=True,",
# is not one), a loop's variable; a rename changes these and nothing else
_DEFINED = re.compile(
    r"\b(?:def|function|func|fn)\s+(\w+)\s*\(([^)]{0,300})\)|"
    r"^[ \t+-]*(?:(?:const|let|var|my|local)\s+)?(\w+)(?:\s*:[^=\n]{1,40})?\s+[-+*/%|&^]?=(?!=)|"
    r"\bfor\s+\(?(?:(?:const|let|var)\s+)?(\w+)\s+(?:in|of)\b", re.M)
_PARAMETER = re.compile(r"(?:^|,)\s*[*&]{0,2}(\w+)")
NAME = "<name>"  # what a name the code gives itself reads as
# code in a programming language, by its file's extension or its fence's language (a
# configuration's keys are what it means, never renamed)
_PROGRAM = frozenset((
    "py", "python", "js", "javascript", "jsx", "ts", "typescript", "tsx", "go", "golang", "rb",
    "ruby", "java", "php", "rs", "rust", "kt", "kotlin", "swift", "c", "h", "cc", "cpp", "cs",
    "scala"))


def program(unit: Unit) -> bool:
    """Whether the unit is code in a programming language (a fence, a file written, a diff)."""
    return unit.part.kind in ("code", "file", "diff") and \
        unit.part.path.rsplit(".", 1)[-1].lower() in _PROGRAM


def own_names(code: str, request: str) -> frozenset[str]:
    """The names ``code`` defines, lowercased, that a rename may change: not one the request
    uses (the function it asked for), a test's or its parameters (a runner finds a test and
    its fixtures by name) or a dunder."""
    found: set[str] = set()
    for match in _DEFINED.finditer(code):
        function, parameters, assigned, looped = match.groups()
        found.update(name for name in (function, assigned, looped) if name)
        if parameters and not function.startswith("test"):  # a test's are fixtures' names
            found.update(_PARAMETER.findall(parameters))
    asked = {word.lower() for word in TOKEN.findall(request)}
    return frozenset(lowered for name in found if len(name) > 1 and not name.startswith(
        ("test", "__")) and name not in ("self", "cls") and (lowered := name.lower()) not in asked)


def ngrams(kind: str, text: str, named: frozenset[str] = frozenset()) -> set[str]:
    """The unit's unigrams and bigrams of lowercased tokens, named by its kind: present or
    not, never counted or normalised by length. Punctuation counts only beside a word:
    alone, a full stop or an exclamation mark is how a sentence ends, not what it says.
    The names in ``named`` (``own_names``) read as one: renamed code is the same act."""
    words = [f"{kind}:{NAME if (lowered := token.lower()) in named else lowered}"
             for token in TOKEN.findall(text)]
    found = {word for word in words if _WORD.search(word, 2)}
    found.update(f"{a} {b[2:]}" for a, b in pairwise(words))
    return found
