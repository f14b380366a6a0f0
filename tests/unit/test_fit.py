"""A verdict too large for the broker is cut to fit, saying what was cut."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor_gateway.schema import Evidence, Latency, MonitorCard, Verdict
from monitor_gateway.verdict import QUOTE_KEPT, fit

NOW = datetime(2026, 11, 22, tzinfo=UTC)
TEXT = "x" * 10 + "q" * 5000


def verdict(**update: object) -> Verdict:
    return Verdict.model_validate({
        "trajectory_id": "t", "flagged": True, "score": 0.9, "threshold": 0.5,
        "evidence": [Evidence(quote=TEXT[10:5010], source="response", start=10, end=5010,
                              grounded=True),
                     Evidence(quote="short", grounded=False)],
        "rationale": "r" * 3000,
        "monitor": MonitorCard(name="m", backend="b", version="1", label="l"),
        "metadata": {"blob": "m" * 20_000},
        "received_at": NOW, "decided_at": NOW,
        "latency_ms": Latency(monitor=1, gateway=2), **update})


def size(v: Verdict) -> int:
    return len(v.model_dump_json().encode())


def test_a_verdict_that_fits_is_left_alone() -> None:
    original = verdict()
    assert fit(original, size(original)) is original


def test_metadata_goes_first_then_rationale_then_long_quotes() -> None:
    original = verdict()
    without_metadata = fit(original, size(original) - 1)
    assert without_metadata is not None and without_metadata.cut == ["metadata"]
    assert without_metadata.rationale == original.rationale

    small = fit(original, 2500)
    assert small is not None and size(small) <= 2500
    assert small.cut == ["metadata", "rationale", "evidence[0].quote"]
    cut_quote = small.evidence[0]
    assert len(cut_quote.quote) == QUOTE_KEPT
    assert cut_quote.start is not None and cut_quote.end is not None
    assert TEXT[cut_quote.start:cut_quote.end] == cut_quote.quote  # offsets still hold
    assert small.evidence[1].quote == "short"
    assert small.flagged and small.score == 0.9  # the judgement itself is never cut


def test_evidence_goes_last_and_nothing_smaller_is_none() -> None:
    tiny = fit(verdict(), 700)
    assert tiny is not None and tiny.evidence == [] and tiny.cut is not None
    assert tiny.cut[-1] == "evidence"
    assert fit(verdict(), 100) is None
