"""Production MR and FAR from reviewers' labels, weighted by how each was sampled: pure
functions.

A label stands for ``1 / p`` production verdicts, ``p`` its inclusion probability. MR is
the ratio estimate (Hajek) of the unflagged share of misbehavior, FAR of the flagged share
of benign traffic. Their variance is the linearised variance of a ratio under Poisson
sampling, ``sum (1 - p) / p^2 * (y - R x)^2 / X^2`` over the labels; the 95% interval is
Wilson's, at the effective sample size that variance implies (Kish's, from the weights,
when the estimate is 0 or 1 and the variance says nothing), so it stays inside [0, 1] and
does not collapse to a point on a handful of labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from monitor_gateway.schema import Label
from replay.scoring import wilson_share


@dataclass(frozen=True, slots=True)
class Labelled:
    """What the estimates need of a label."""

    misbehavior: bool  # the reviewer's decision
    flagged: bool  # the monitor's
    probability: float  # the inclusion probability
    category: str | None = None
    version: str = ""


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float | None  # None: no label in the domain
    low: float | None
    high: float | None
    labels: int  # the labels the figure rests on (its domain)


def ratio(items: Iterable[tuple[bool, bool, float]]) -> Estimate:
    """The weighted share of events in a domain, from (in the domain, an event, inclusion
    probability) per label, with its 95% interval."""
    domain = [(event, p) for inside, event, p in items if inside]
    total = sum(1 / p for _, p in domain)
    if not domain:
        return Estimate(None, None, None, 0)
    value = sum(1 / p for event, p in domain if event) / total
    variance = sum((1 - p) / p**2 * (event - value) ** 2 for event, p in domain) / total**2
    if 0.0 < value < 1.0 and variance == 0.0:  # every label taken for sure: a census
        return Estimate(value, value, value, len(domain))
    if 0.0 < value < 1.0:
        effective = value * (1 - value) / variance
    else:
        effective = total**2 / sum(1 / p**2 for _, p in domain)
    low, high = wilson_share(value, effective)
    return Estimate(value, low, high, len(domain))


def miss_rate(labelled: Iterable[Labelled]) -> Estimate:
    """MR: the share of misbehavior the monitor let through."""
    return ratio((item.misbehavior, not item.flagged, item.probability) for item in labelled)


def false_alarm_rate(labelled: Iterable[Labelled]) -> Estimate:
    """FAR: the share of benign traffic the monitor flagged."""
    return ratio((not item.misbehavior, item.flagged, item.probability) for item in labelled)


def labelled(label: Label) -> Labelled:
    return Labelled(misbehavior=label.decision == "misbehavior", flagged=label.verdict.flagged,
                    probability=label.inclusion_probability,
                    category=label.category or label.verdict.category,
                    version=label.monitor.version)


Group = tuple[str, str]  # monitor version, category ("all": every category)


def by_group(items: Sequence[Labelled]) -> dict[Group, tuple[Estimate, Estimate]]:
    """(MR, FAR) per monitor version, overall (``all``) and per category: a label's
    category is the reviewer's, or the verdict's when the reviewer gave none."""
    groups: dict[Group, list[Labelled]] = {}
    for item in items:
        groups.setdefault((item.version, "all"), []).append(item)
        if item.category:
            groups.setdefault((item.version, item.category), []).append(item)
    return {key: (miss_rate(members), false_alarm_rate(members))
            for key, members in sorted(groups.items())}
