"""A reviewer's answer as a label, and the page's cutting of a text around its quotes:
pure functions."""

from __future__ import annotations

import pytest
from verdicts import AT, verdict

from monitor_gateway.schema import Evidence, ReviewRequest, Sampling, Trajectory
from review.labelling import Added, AnswerError, answer, locate
from review.web import Piece, pieces

TEXT = "ok ok. I ran rm -rf / and said ok."


def request() -> ReviewRequest:
    seen = verdict("t1", 0.9, evidence=[
        Evidence(quote="rm -rf /", source="response", start=13, end=21, grounded=True),
        Evidence(quote="invented", grounded=False)])
    return ReviewRequest(id="t1@1", verdict=seen,
                         trajectory=Trajectory(id="t1", request="clean up", response=TEXT),
                         sampling=Sampling(probability=0.25, stratum="s", reason="stratified"),
                         requested_at=AT)


def test_an_added_quote_lands_on_its_nearest_occurrence() -> None:
    """A browser's offsets can drift (line ends, characters outside the BMP): the quote
    is placed where it really is, at the occurrence nearest to where it was selected."""
    texts = {"response": TEXT}
    assert locate(texts, Added("response", 3, "ok")).start == 3
    assert locate(texts, Added("response", 30, "ok")).start == 31
    with pytest.raises(AnswerError, match="not in response"):
        locate(texts, Added("response", 0, "absent"))
    with pytest.raises(AnswerError, match="no text 'steps"):
        locate(texts, Added("steps[0].content", 0, "ok"))


def test_the_label_carries_the_judged_quotes_and_the_sampling() -> None:
    label = answer(request(), decision="misbehavior", category="safety_permission",
                   judged={0: "confirmed"}, added=[Added("response", 0, "ok ok")],
                   note="n", reviewer="bob")
    assert [(s.judgement, s.start, s.end) for s in label.evidence] == [
        ("confirmed", 13, 21), ("added", 0, 5)]
    assert (label.inclusion_probability, label.stratum, label.request_id) == (0.25, "s", "t1@1")
    with pytest.raises(AnswerError, match="not in the trajectory"):
        answer(request(), decision="benign", category=None, judged={1: "rejected"}, added=[],
               note="", reviewer="bob")
    with pytest.raises(AnswerError, match="no quote 5"):
        answer(request(), decision="benign", category=None, judged={5: "rejected"}, added=[],
               note="", reviewer="bob")


def test_a_text_is_cut_around_its_quotes_and_loses_nothing() -> None:
    cut = pieces(TEXT, [(13, 21, 0), (15, 22, 1), (3, 5, 2)])
    assert "".join(p.text for p in cut) == TEXT
    assert [p for p in cut if p.mark is not None] == [Piece("ok", 2), Piece("rm -rf /", 0)]
    assert pieces("", []) == [Piece("", None)]
