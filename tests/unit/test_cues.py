"""Cues (``detectors.cues``): a pattern is skipped only on text it cannot match, so every
detector's patterns find what they found without them."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import monitor_gateway.monitors.detectors.parts as parts_module
from monitor_gateway.monitors.detectors import DETECTORS, code, shellparse
from monitor_gateway.monitors.detectors.cues import Cued, cued, cues, folded


def _cued() -> dict[str, Cued]:
    """Every cued pattern of the detectors, once (by the first name it has)."""
    found: dict[int, tuple[str, Cued]] = {}
    for module in (*DETECTORS, parts_module, shellparse):
        for name, value in vars(module).items():
            if isinstance(value, Cued):
                found.setdefault(id(value), (f"{module.__name__.rsplit('.', 1)[-1]}.{name}",
                                             value))
    for check, _, pattern, _ in code._LINE_RULES:
        found.setdefault(id(pattern), (check.id, pattern))
    return dict(found.values())


CUED = _cued()
# what an ASCII letter matches case-insensitively outside ASCII
ODD = {"i": "\u0130\u0131", "s": "\u017f", "k": "\u212a"}


def test_the_cues_are_literal_text_every_match_holds() -> None:
    assert cues(re.compile(r"\b(?:you(?:'re| are) (?:right|correct)|spot on)\b", re.I)) == (
        "correct", "right", "spot on")
    # the longest of a sequence's literal runs; of a repetition, only one at least once
    assert cues(re.compile(r"\bjwt\.decode\(\s{0,3}[\w.]{1,40}")) == ("jwt.decode(",)
    assert cues(re.compile(r"(?:ab)+x?yz")) == ("ab",)
    # none where a branch may match without one, or for a character outside ASCII
    assert cues(re.compile(r"\b(?:no|\d+)\b")) is None
    assert cues(re.compile("\u017f")) is None
    # no cue holds another
    assert cues(re.compile(r"concerns?|concern")) == ("concern",)


def test_a_cued_pattern_finds_what_the_pattern_finds() -> None:
    pattern = cued(r"\bsure\b", re.I)
    assert pattern.search("I'm not SURE") is not None
    assert pattern.search("I'm not \u017fure") is not None  # a long S is an s to re.I
    assert pattern.search("I'm not certain") is None
    assert [m.start() for m in pattern.finditer("sure, sure")] == [0, 6]
    assert pattern.findall("nothing") == []


def test_every_character_an_ascii_one_matches_case_insensitively_is_folded_to_it() -> None:
    ascii_char = re.compile(r"[\x00-\x7f]", re.I)
    for point in range(128, sys.maxunicode + 1):
        char = chr(point)
        if ascii_char.fullmatch(char):
            matched = [c.lower() for c in map(chr, range(128))
                       if re.fullmatch(re.escape(c), char, re.I)]
            assert folded(char) in matched, hex(point)


def _odd(text: str, draw: Callable[[st.SearchStrategy[str]], str]) -> str:
    """``text`` with some of its letters in another case, or written as a character
    outside ASCII that re.I reads as them."""
    return "".join(draw(st.sampled_from([c, c.swapcase(), *ODD.get(c.lower(), "")]))
                   for c in text)


@pytest.mark.parametrize("name", sorted(CUED))
@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_whatever_a_cued_pattern_matches_holds_a_cue(name: str, data: st.DataObject) -> None:
    pattern = CUED[name]
    text = data.draw(st.from_regex(pattern.pattern))
    for variant in (text, _odd(text, data.draw)):
        if pattern.pattern.search(variant) is not None:
            assert pattern.holds(folded(variant)), (name, variant)
