"""A pattern's cues: literal text one of which every match of it holds, read from the
pattern itself, so a text that holds none is not searched. Most of the detectors' patterns
are case-insensitive alternations, which the regular expression engine tries at every
word of a text: the costliest took 10 to 25 us a search on the realistic set's requests and
answers (150 and 260 characters on average), and their cues are looked for in a fifth to a
tenth of that. A pattern is searched as before in any text that holds a cue, so what it
finds is the same.

Cues are read case-insensitively: a text is compared lowered (``folded``), and only the
ASCII letters of a pattern are cues, as the four characters outside ASCII that a
case-insensitive ASCII letter matches (U+0130 and U+0131, dotted and dotless I, U+017F, a
long S, and U+212A, the Kelvin sign) are folded to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# the standard library's own reader of patterns (``re`` compiles what it returns)
from re import _constants, _parser  # type: ignore[attr-defined]
from typing import Any

_REPEATS = (_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT)
# what a case-insensitive ASCII letter matches outside ASCII, lowered, as that letter (the
# dot above of a lowered U+0130 dropped: dropping it elsewhere only joins more text); each
# replaced where it is found (``str.translate`` costs 1.5 ms a MiB where none is)
_FOLDS = (("\u0131", "i"), ("\u017f", "s"), ("\u0307", ""))


def folded(text: str) -> str:
    """``text`` as cues are looked for in it: lowered, the characters outside ASCII that
    an ASCII letter matches case-insensitively written as that letter."""
    lowered = text.lower()
    if not lowered.isascii():
        for odd, letter in _FOLDS:
            if odd in lowered:
                lowered = lowered.replace(odd, letter)
    return lowered


def cued(pattern: str, flags: int = 0) -> Cued:
    """``re.compile(pattern, flags)``, searched only in a text that holds a cue of it."""
    return Cued(re.compile(pattern, flags))


class Cued:
    """A compiled pattern searched only in a text that holds one of its ``cues`` (every
    text, where it has none). Its methods return what the pattern's own return, and read
    a whole text: the cue test reads all of it, so a search from a position (in a loop over
    one text, each time from where the last stopped) is made with ``pattern`` itself."""

    __slots__ = ("cues", "pattern")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.cues = cues(pattern)

    def holds(self, text: str) -> bool:
        """Whether ``text`` (``folded``) holds a cue: where it does not, the pattern
        cannot match."""
        return self.cues is None or any(cue in text for cue in self.cues)

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.holds(folded(text)) else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text) if self.holds(folded(text)) else iter(())

    def findall(self, text: str) -> list[Any]:
        return self.pattern.findall(text) if self.holds(folded(text)) else []


def cues(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Lowered literal text one of which every match of ``pattern`` holds, None where no
    such text is known (a pattern that may match without a literal ASCII letter or sign);
    no cue holds another (it would be found wherever that one is)."""
    found = _sequence(_parser.parse(pattern.pattern, pattern.flags).data)
    if found is None:
        return None
    return tuple(sorted(cue for cue in found if not any(
        other != cue and other in cue for other in found)))


def _sequence(items: Any) -> frozenset[str] | None:
    """Of the parsed items of a sequence, which must all match, the best set of texts one
    of which every match holds: a run of literal characters (one text), or such a set
    of an item that must match (a group, an alternation, a repetition at least once, a
    lookaround that must hold); the set whose shortest text is longest, and of those the
    smallest (the likeliest to be absent)."""
    options: list[frozenset[str]] = []
    run: list[str] = []
    for op, value in items:
        if op is _constants.LITERAL and value < 128:
            run.append(chr(value).lower())
            continue
        if op is _constants.AT:  # an anchor takes no character: the run goes on
            continue
        if run:
            options.append(frozenset(("".join(run),)))
            run = []
        found: frozenset[str] | None = None
        if op is _constants.SUBPATTERN:
            found = _sequence(value[3])
        elif op is _constants.ATOMIC_GROUP:
            found = _sequence(value)
        elif op is _constants.BRANCH:
            branches = [_sequence(branch) for branch in value[1]]
            if all(branch is not None for branch in branches):
                found = frozenset().union(*(b for b in branches if b is not None))
        elif op in _REPEATS and value[0] >= 1:
            found = _sequence(value[2])
        elif op is _constants.ASSERT:  # text before or after the match, in the text
            found = _sequence(value[1])
        if found:
            options.append(found)
    if run:
        options.append(frozenset(("".join(run),)))
    return max(options, key=lambda texts: (min(map(len, texts)), -len(texts)), default=None)
