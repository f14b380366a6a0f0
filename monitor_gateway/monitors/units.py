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
            out.append(Unit("t", part, 0, min(len(part.text), MAX_UNIT)))
            if part.kind == "command":
                out.extend(_inner(part))
    return out


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


def ngrams(kind: str, text: str) -> set[str]:
    """The unit's unigrams and bigrams of lowercased tokens, named by its kind: present or
    not, never counted or normalised by length. Punctuation counts only beside a word:
    alone, a full stop or an exclamation mark is how a sentence ends, not what it says."""
    words = [f"{kind}:{token.lower()}" for token in TOKEN.findall(text)]
    found = {word for word in words if _WORD.search(word, 2)}
    found.update(f"{a} {b[2:]}" for a, b in pairwise(words))
    return found
