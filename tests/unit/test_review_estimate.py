"""Production MR and FAR from weighted labels: known numbers, and the intervals' coverage
over repeated sampling draws."""

from __future__ import annotations

import random

import pytest
from verdicts import verdict

from replay.scoring import wilson, wilson_share
from review.estimate import Estimate, Labelled, by_group, false_alarm_rate, miss_rate
from review.sampling import Design, pick


def test_a_rare_stratum_weighs_by_its_inverse_probability() -> None:
    """Two flagged misbehavior labels taken at 1/2 stand for 4; one missed taken at 1/10
    stands for 10: MR 10/14, not the unweighted 1/3. The variance of the ratio,
    (2 * 2 * (5/7)^2 + 90 * (2/7)^2) / 14^2, is that of a share of 196/46 samples."""
    labels = [Labelled(True, True, 0.5), Labelled(True, True, 0.5), Labelled(True, False, 0.1)]
    mr = miss_rate(labels)
    assert mr.value == pytest.approx(10 / 14)
    assert (mr.low, mr.high) == pytest.approx(wilson_share(10 / 14, 196 / 46))
    assert (mr.low, mr.high) == pytest.approx((0.2855, 0.9399), abs=1e-4)  # by hand
    assert mr.labels == 3
    assert false_alarm_rate(labels) == Estimate(None, None, None, 0)


def test_none_missed_is_an_interval_above_zero_not_a_point() -> None:
    """Four flagged misbehavior labels at 1/2: MR 0, and the interval of 0 out of Kish's
    effective size (8^2 / 16 = 4), as 0 of 4 unweighted samples would give."""
    mr = miss_rate([Labelled(True, True, 0.5)] * 4)
    assert mr.value == 0.0
    assert (mr.low, mr.high) == pytest.approx(wilson(0, 4))


def test_a_census_has_no_sampling_error() -> None:
    far = false_alarm_rate([Labelled(False, True, 1.0), *[Labelled(False, False, 1.0)] * 3])
    assert far == Estimate(0.25, 0.25, 0.25, 4)


def test_figures_by_monitor_version_and_category() -> None:
    labels = [Labelled(True, False, 1.0, "sycophancy_bias", "1"),
              Labelled(True, True, 1.0, "safety_permission", "1"),
              Labelled(False, True, 1.0, None, "2")]
    groups = by_group(labels)
    assert sorted(groups) == [("1", "all"), ("1", "safety_permission"),
                              ("1", "sycophancy_bias"), ("2", "all")]
    assert groups[("1", "all")][0].value == 0.5
    assert groups[("1", "sycophancy_bias")][0].value == 1.0
    assert groups[("2", "all")][1].value == 1.0


def test_intervals_cover_the_truth_over_200_draws_with_flagged_sampled_ten_times_more() -> None:
    """A fixed production population (4,000 verdicts, a quarter misbehavior, MR 0.35, FAR
    0.06), sampled 200 times by the sampler itself with a new seed each time (flagged at
    0.3, unflagged at 0.03): the 95% intervals cover the population's true MR and FAR in
    at least 90% of draws, and the estimates are centred on the truth."""
    rng = random.Random(34)
    population = []
    for i in range(4000):
        bad = rng.random() < 0.25
        flagged = rng.random() < (0.65 if bad else 0.06)
        score = rng.uniform(0.5, 1.0) if flagged else rng.uniform(0.0, 0.499)
        population.append((bad, verdict(f"t{i}", score)))
    true_mr = (sum(bad and not v.flagged for bad, v in population)
               / sum(bad for bad, _ in population))
    true_far = (sum(not bad and v.flagged for bad, v in population)
                / sum(not bad for bad, _ in population))
    covered = {"mr": 0, "far": 0}
    estimates: dict[str, list[float]] = {"mr": [], "far": []}
    for draw in range(200):
        design = Design(flagged=0.3, unflagged=0.03, uncertainty=0.0, seed=f"draw-{draw}")
        sample = [Labelled(bad, v.flagged, s.probability) for bad, v in population
                  if (s := pick(v, design)) is not None]
        for name, estimate, truth in (("mr", miss_rate(sample), true_mr),
                                      ("far", false_alarm_rate(sample), true_far)):
            assert estimate.value is not None and estimate.low is not None \
                and estimate.high is not None
            covered[name] += estimate.low <= truth <= estimate.high
            estimates[name].append(estimate.value)
    assert covered["mr"] >= 180 and covered["far"] >= 180, covered
    assert sum(estimates["mr"]) / 200 == pytest.approx(true_mr, abs=0.02)
    assert sum(estimates["far"]) / 200 == pytest.approx(true_far, abs=0.01)


def test_an_interval_at_zero_or_one_includes_it_exactly() -> None:
    """Computed, the bounds at these sizes come out a rounding error inside."""
    assert wilson_share(0.0, 3.0)[0] == 0.0 and wilson_share(0.0, 123.4)[0] == 0.0
    assert wilson_share(1.0, 10.5)[1] == 1.0
