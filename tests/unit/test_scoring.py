import pytest

from replay.scoring import Confusion, count, percentile, wilson


def test_rates_on_a_hand_computed_confusion_matrix() -> None:
    confusion = count([(True, True)] * 8 + [(True, False)] * 2 + [(False, True)] * 3
                      + [(False, False)] * 27)
    assert confusion == Confusion(tp=8, fn=2, fp=3, tn=27)
    assert confusion.mr == pytest.approx(0.2)
    assert confusion.far == pytest.approx(0.1)
    assert (confusion + Confusion(tp=2)).mr == pytest.approx(2 / 12)


def test_no_samples_means_no_rate_not_zero() -> None:
    assert Confusion().mr is None and Confusion().far is None
    assert Confusion(tp=3).far is None
    assert wilson(0, 0) is None


def test_wilson_interval_on_known_values() -> None:
    # 8 of 10: Wilson 95% interval (0.4902, 0.9433), e.g. Newcombe (1998)
    low, high = wilson(8, 10)  # type: ignore[misc]
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    # 0 of 20 stays inside [0, 1] and is not degenerate: (0, 0.1611)
    low, high = wilson(0, 20)  # type: ignore[misc]
    assert low == 0.0 and high == pytest.approx(0.1611, abs=1e-4)
    low, high = wilson(20, 20)  # type: ignore[misc]
    assert high == 1.0 and low == pytest.approx(0.8389, abs=1e-4)


def test_percentiles_interpolate_between_ranks() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 99) == pytest.approx(99.01)
    assert percentile([3.0], 95) == 3.0
    assert percentile([], 50) is None


def test_localised_needs_an_overlap_in_the_same_text() -> None:
    from replay.scoring import localisation, localised

    gold = [("response", 10, 20)]
    assert localised([("response", 15, 30)], gold)
    assert localised([("response", 0, 11)], gold)
    assert not localised([("response", 20, 25)], gold)  # touching is not overlapping
    assert not localised([("request", 12, 18)], gold)  # same offsets, another text
    assert not localised([], gold)
    figures = localisation([True, True, False, True])
    assert figures["n"] == 4 and figures["localised"] == 3 and figures["share"] == 0.75
    assert localisation([])["share"] is None
