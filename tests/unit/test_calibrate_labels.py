"""``calibrate --labels``: thresholds from production labels, each weighted by the inverse
of the probability it was sampled with. Calibrated on the labels of one half of a
deployment's traffic, the threshold holds the other half's FAR to the budget."""

from __future__ import annotations

from verdicts import labels_of, traffic

from monitor_gateway.schema import Verdict
from replay.calibrate import calibrate, label_rows
from review.estimate import Labelled, false_alarm_rate
from review.sampling import Design

BUDGET = 0.05


def far_at(population: list[tuple[bool, Verdict]], threshold: float) -> float:
    benign = [v.score for bad, v in population if not bad]
    return sum(score >= threshold for score in benign) / len(benign)


def test_a_threshold_from_one_halfs_labels_holds_the_other_halfs_far_to_the_budget() -> None:
    population = traffic(12_000, seed=7)
    first, second = population[::2], population[1::2]
    design = Design(flagged=0.5, unflagged=0.05, uncertainty=0.0, seed="calibrate")
    labels = labels_of(first, design)
    threshold = calibrate(label_rows(labels), BUDGET)["default"].threshold
    # the weighted FAR estimate at that threshold, from the labels alone, and its interval
    estimate = false_alarm_rate([Labelled(label.decision == "misbehavior",
                                          label.verdict.score >= threshold,
                                          label.inclusion_probability) for label in labels])
    assert estimate.low is not None and estimate.high is not None
    assert estimate.low <= BUDGET <= estimate.high
    applied = far_at(second, threshold)
    assert estimate.low <= applied <= estimate.high, (threshold, applied, estimate)
    # unweighted, the flagged benign labels (sampled ten times as often) count ten times
    # too much: the threshold comes out far too high, and the budget is left unused
    unweighted = [{**row, "weight": 1.0} for row in label_rows(labels)]
    naive = calibrate(unweighted, BUDGET)["default"].threshold
    assert naive > threshold and far_at(second, naive) < estimate.low
