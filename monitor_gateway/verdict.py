"""Assemble the Verdict the contract promises from a judgement or a failure, and make a
verdict fit the broker's message size."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from .monitors.base import Judgement, MonitorFailure
from .policy import Policy
from .schema import Evidence, Incomplete, Latency, MonitorCard, ReplayTag, Verdict, utcnow


class Subject(Protocol):
    """What a verdict reads of its trajectory: a :class:`~.schema.Trajectory`, or what a
    worker process sent back of it."""

    @property
    def id(self) -> str: ...

    @property
    def metadata(self) -> dict[str, Any]: ...


def build_verdict(
    trajectory: Subject,
    outcome: Judgement | MonitorFailure,
    evidence: list[Evidence],
    *,
    card: MonitorCard,
    policy: Policy,
    tag: ReplayTag | None,
    received_at: datetime,
    monitor_seconds: float,
    gateway_seconds: float,
    incomplete: Incomplete | None = None,
) -> Verdict:
    """``card`` is the monitor that judged (a cascade's deciding stage); the policy decides
    ``flagged`` and labels the card with the threshold it applied."""
    category = outcome.category if isinstance(outcome, Judgement) else None
    threshold = policy.threshold(category)
    common = {
        "trajectory_id": trajectory.id,
        "threshold": threshold,
        "monitor": policy.card(card, threshold),
        "replay_run": tag.run if tag else None,
        "metadata": trajectory.metadata,
        "received_at": received_at,
        "decided_at": utcnow(),
        "latency_ms": Latency(monitor=monitor_seconds * 1000, gateway=gateway_seconds * 1000),
        "incomplete": incomplete,
    }
    if isinstance(outcome, MonitorFailure):
        flagged, score = policy.failed()
        return Verdict(flagged=flagged, score=score, status="error", error=outcome.reason,
                       **common)
    return Verdict(
        flagged=policy.flagged(outcome.score, threshold),
        score=outcome.score,
        category=outcome.category,
        severity=outcome.severity,
        evidence=evidence,
        rationale=outcome.rationale,
        **common,
    )


QUOTE_KEPT = 256  # characters of a quote kept when a verdict must shrink


def fit(verdict: Verdict, limit: int) -> Verdict | None:
    """The verdict made to fit ``limit`` bytes of JSON, naming in ``cut`` what was cut:
    first ``metadata``, then ``rationale``, then every quote over ``QUOTE_KEPT`` characters
    (kept as its prefix, ``end`` moved so that ``text[start:end] == quote`` still holds),
    then the whole evidence list. None when even that is too large."""
    for shrink in (_without_metadata, _without_rationale, _short_quotes, _without_evidence):
        if _size(verdict) <= limit:
            return verdict
        update, cut = shrink(verdict)
        if cut:
            verdict = verdict.model_copy(update={**update, "cut": [*(verdict.cut or []), *cut]})
    return verdict if _size(verdict) <= limit else None


Shrunk = tuple[dict[str, object], list[str]]


def _size(verdict: Verdict) -> int:
    return len(verdict.model_dump_json().encode())


def _without_metadata(verdict: Verdict) -> Shrunk:
    return ({"metadata": {}}, ["metadata"]) if verdict.metadata else ({}, [])


def _without_rationale(verdict: Verdict) -> Shrunk:
    return ({"rationale": None}, ["rationale"]) if verdict.rationale else ({}, [])


def _short_quotes(verdict: Verdict) -> Shrunk:
    evidence, cut = [], []
    for i, item in enumerate(verdict.evidence):
        if len(item.quote) > QUOTE_KEPT:
            end = item.start + QUOTE_KEPT if item.start is not None else None
            item = item.model_copy(update={"quote": item.quote[:QUOTE_KEPT], "end": end})
            cut.append(f"evidence[{i}].quote")
        evidence.append(item)
    return {"evidence": evidence}, cut


def _without_evidence(verdict: Verdict) -> Shrunk:
    return ({"evidence": []}, ["evidence"]) if verdict.evidence else ({}, [])
