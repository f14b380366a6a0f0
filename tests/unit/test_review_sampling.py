"""Which verdicts go to review: the probability each is taken with, by stratum and near
the threshold, and a pick that is the same every time the verdict is read."""

from __future__ import annotations

import pytest
from verdicts import verdict

from review.sampling import Design, band, inclusion, pick


def test_bands_cover_zero_to_one() -> None:
    edges = (0.2, 0.4, 0.6, 0.8)
    assert [band(s, edges) for s in (0.0, 0.2, 0.39, 0.5, 0.99, 1.0)] == [
        "0-0.2", "0.2-0.4", "0.2-0.4", "0.4-0.6", "0.8-1", "0.8-1"]


def test_flagged_and_unflagged_strata_take_their_rates() -> None:
    design = Design(flagged=0.5, unflagged=0.05, uncertainty=0.0)
    flagged = inclusion(verdict("a", 0.9, category="sycophancy_bias"), design)
    unflagged = inclusion(verdict("b", 0.1), design)
    assert flagged is not None and unflagged is not None
    assert (flagged.probability, flagged.stratum) == (0.5, "flagged/sycophancy_bias/0.8-1")
    assert (unflagged.probability, unflagged.stratum) == (0.05, "unflagged/none/0-0.2")


def test_a_stratum_rate_overrides_and_zero_never_picks() -> None:
    design = Design(rates={"unflagged/none/0-0.2": 0.0, "flagged/none/0.6-0.8": 1.0})
    assert inclusion(verdict("a", 0.1), design) is None
    assert pick(verdict("a", 0.1), design) is None
    taken = pick(verdict("b", 0.7), design)
    assert taken is not None and taken.probability == 1.0


def test_near_the_threshold_the_probability_is_raised_and_says_why() -> None:
    design = Design(flagged=0.5, unflagged=0.05, uncertainty_width=0.05, uncertainty=0.8)
    near = inclusion(verdict("a", 0.47), design)
    far = inclusion(verdict("b", 0.40), design)
    assert near is not None and (near.probability, near.reason) == (0.8, "uncertainty")
    assert far is not None and (far.probability, far.reason) == (0.05, "stratified")


def test_replayed_and_error_verdicts_are_not_production() -> None:
    design = Design(flagged=1.0, unflagged=1.0)
    assert pick(verdict("a", 0.9), design) is not None
    assert pick(verdict("a", 0.9, replay_run="replay-1"), design) is None
    assert pick(verdict("a", 0.9).model_copy(update={"status": "error"}), design) is None


def test_picks_are_fixed_by_the_verdict_and_taken_at_their_rate() -> None:
    """Read again (after a restart), the same verdicts are picked; across ids, the share
    picked is the probability; a new monitor version is a new draw."""
    design = Design(flagged=0.5, unflagged=0.1, uncertainty=0.0)
    verdicts = [verdict(f"t{i}", 0.9 if i % 2 else 0.1) for i in range(20_000)]
    first = [pick(v, design) is not None for v in verdicts]
    assert first == [pick(v, design) is not None for v in verdicts]
    flagged = [p for p, v in zip(first, verdicts, strict=True) if v.flagged]
    unflagged = [p for p, v in zip(first, verdicts, strict=True) if not v.flagged]
    assert sum(flagged) / len(flagged) == pytest.approx(0.5, abs=0.015)
    assert sum(unflagged) / len(unflagged) == pytest.approx(0.1, abs=0.01)
    other = [pick(verdict(v.trajectory_id, v.score, version="2"), design) is not None
             for v in verdicts]
    assert other != first


def test_a_rate_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"flagged: 1\.5"):
        Design(flagged=1.5)
