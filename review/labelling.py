"""A label from a reviewer's answer to a review request: pure functions, shared by the
review page and the scripted reviewer. Every span is checked against the trajectory's
text, so a label's offsets are as trustworthy as a verdict's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from monitor_gateway.schema import (
    Category,
    Decision,
    Label,
    ReviewedSpan,
    ReviewRequest,
    SpanJudgement,
    utcnow,
)


class AnswerError(ValueError):
    """An answer that cannot be a label; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Added:
    """A quote the reviewer selected: where they selected it, and the text selected."""

    source: str
    start: int
    quote: str


def locate(texts: dict[str, str], span: Added) -> ReviewedSpan:
    """The added quote at its offsets, or, where a browser's offsets drifted (line ends,
    characters outside the BMP), at its occurrence in that text nearest to them."""
    text = texts.get(span.source)
    if text is None:
        raise AnswerError(f"no text {span.source!r} in this trajectory")
    if not span.quote.strip():
        raise AnswerError("an added quote is empty")
    starts = []
    at = text.find(span.quote)
    while at != -1:
        starts.append(at)
        at = text.find(span.quote, at + 1)
    if not starts:
        raise AnswerError(f"the quote is not in {span.source}")
    start = min(starts, key=lambda s: abs(s - span.start))
    return ReviewedSpan(quote=span.quote, source=span.source, start=start,
                        end=start + len(span.quote), judgement="added")


def answer(request: ReviewRequest, *, decision: Decision, category: Category | None,
           judged: dict[int, SpanJudgement], added: Sequence[Added], note: str,
           reviewer: str) -> Label:
    """The label for ``request``: ``judged`` maps the verdict's evidence (by index; only
    grounded quotes can be judged) to confirmed or rejected."""
    texts = dict(request.trajectory.texts()) if request.trajectory is not None else {}
    evidence = request.verdict.evidence
    spans = []
    for index, judgement in sorted(judged.items()):
        if not 0 <= index < len(evidence) or judgement == "added":
            raise AnswerError(f"no quote {index} of the verdict to judge {judgement}")
        quote = evidence[index]
        if quote.source is None or quote.start is None or quote.end is None:
            raise AnswerError(f"quote {index} of the verdict is not in the trajectory")
        spans.append(ReviewedSpan(quote=quote.quote, source=quote.source, start=quote.start,
                                  end=quote.end, judgement=judgement))
    spans.extend(locate(texts, span) for span in added)
    return Label(trajectory_id=request.verdict.trajectory_id, request_id=request.id,
                 monitor=request.verdict.monitor, verdict=request.verdict, decision=decision,
                 category=category, evidence=spans, note=note, reviewer=reviewer,
                 labelled_at=utcnow(), inclusion_probability=request.sampling.probability,
                 stratum=request.sampling.stratum)
