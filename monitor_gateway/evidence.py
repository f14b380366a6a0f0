"""Ground a monitor's quotes in the trajectory: only text that is really there is proof.

A quote is looked up exactly first, then with runs of whitespace folded (LLMs re-wrap
lines). The evidence keeps the trajectory's own characters, so ``text[start:end] == quote``.
"""

from __future__ import annotations

import re

from .monitors.base import Quote
from .schema import Evidence, Trajectory

_WHITESPACE = re.compile(r"\s+")


def ground(trajectory: Trajectory, quotes: list[Quote]) -> list[Evidence]:
    if not quotes:
        return []
    return ground_in(dict(trajectory.texts()), quotes)


def ground_in(texts: dict[str, str], quotes: list[Quote]) -> list[Evidence]:
    """The quotes found in ``texts`` (by source name): one step's, for a step verdict."""
    folded: dict[str, tuple[str, list[int]]] = {}
    evidence = []
    for quote in quotes:
        if not quote.text.strip():
            continue
        evidence.append(_locate(quote, texts, folded))
    return evidence


def _locate(
    quote: Quote, texts: dict[str, str], folded: dict[str, tuple[str, list[int]]]
) -> Evidence:
    hinted = texts.get(quote.source or "")
    if hinted is not None and quote.start is not None:
        end = quote.start + len(quote.text)
        if hinted[quote.start : end] == quote.text:
            return Evidence(
                quote=quote.text, source=quote.source, start=quote.start, end=end, grounded=True
            )
    # search the hinted source first, then every text in reading order
    order = ([quote.source] if hinted is not None else []) + list(texts)
    for source in order:
        assert source is not None
        start = texts[source].find(quote.text)
        if start >= 0:
            end = start + len(quote.text)
            return Evidence(quote=quote.text, source=source, start=start, end=end, grounded=True)
    needle = _WHITESPACE.sub(" ", quote.text.strip())
    for source in order:
        assert source is not None
        if source not in folded:
            folded[source] = fold_whitespace(texts[source])
        text, origin = folded[source]
        at = text.find(needle)
        if at >= 0:
            start, end = origin[at], origin[at + len(needle) - 1] + 1
            return Evidence(
                quote=texts[source][start:end], source=source, start=start, end=end, grounded=True
            )
    return Evidence(quote=quote.text, grounded=False)


def fold_whitespace(text: str) -> tuple[str, list[int]]:
    """``text`` with each run of whitespace made one space, and for every character of the
    result the offset of the character it came from."""
    out: list[str] = []
    origin: list[int] = []
    last = 0
    for match in _WHITESPACE.finditer(text):
        out.append(text[last : match.start()])
        origin.extend(range(last, match.start()))
        out.append(" ")
        origin.append(match.start())
        last = match.end()
    out.append(text[last:])
    origin.extend(range(last, len(text)))
    return "".join(out), origin
