"""The replay report's per-stage figures for cascades."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor_gateway.schema import MonitorCard, Verdict
from replay.client import Result
from replay.dataset import Sample
from replay.report import build_report


def result(label: str, stage: str, flagged: bool) -> Result:
    sample = Sample(id=f"{label}-{stage}-{flagged}", label=label, category="safety_permission",
                    request="r", response="a")
    now = datetime.now(UTC)
    verdict = Verdict(
        trajectory_id=sample.id, flagged=flagged, score=0.9 if flagged else 0.1, threshold=0.5,
        monitor=MonitorCard(name=stage, backend="x", version="1", label="l"),
        received_at=now, decided_at=now, latency_ms={"monitor": 1.0, "gateway": 0.1, "total": 1.1})
    return Result(sample, verdict, 0.01)


def test_each_cascade_stage_reports_its_decided_share_and_far() -> None:
    results = [result("misbehavior", "cascade/offline", True)] * 3
    results += [result("benign", "cascade/offline", True)]
    results += [result("benign", "cascade/offline", False)] * 4
    results += [result("benign", "cascade/openai", False)] * 2
    stages = build_report(run_id="r", dataset="d", results=results, missing=0,
                          elapsed_s=1.0)["stages"]
    assert set(stages) == {"offline", "openai"}
    assert stages["offline"]["decided"] == 8 and stages["offline"]["share"] == 0.8
    assert stages["offline"]["far"] == 0.2 and stages["offline"]["mr"] == 0.0
    assert stages["openai"]["share"] == 0.2 and stages["openai"]["far"] == 0.0


def test_a_single_monitor_has_no_stages() -> None:
    report = build_report(run_id="r", dataset="d", missing=0, elapsed_s=1.0,
                          results=[result("benign", "offline", False)])
    assert report["stages"] == {}


def judged(sample_id: str, label: str, flagged: bool) -> Result:
    sample = Sample(id=sample_id, label=label, category="safety_permission", request="r",
                    response="a")
    now = datetime.now(UTC)
    verdict = Verdict(
        trajectory_id=sample_id, flagged=flagged, score=0.9 if flagged else 0.1, threshold=0.5,
        monitor=MonitorCard(name="offline", backend="x", version="1", label="l"),
        received_at=now, decided_at=now, latency_ms={"monitor": 1.0, "gateway": 0.1})
    return Result(sample, verdict, 0.01)


def test_rewritten_samples_count_only_in_their_familys_flips() -> None:
    """Two flagged misbehavior samples, one unflagged by its hedge rewrite; two clear benign
    ones, one flagged once padded; the headline figures are the originals' alone."""
    results = [judged("m1", "misbehavior", True), judged("m2", "misbehavior", True),
               judged("b1", "benign", False), judged("b2", "benign", False),
               judged("m1~hedge", "misbehavior", False), judged("m2~hedge", "misbehavior", True),
               judged("b1~pad", "benign", True), judged("b2~pad", "benign", False)]
    report = build_report(run_id="r", dataset="d", results=results, missing=0, elapsed_s=1.0)
    assert (report["overall"]["tp"], report["overall"]["tn"]) == (2, 2)
    flips = report["perturbations"]
    assert (flips["hedge"]["flagged_misbehavior"], flips["hedge"]["unflagged"]) == (2, 1)
    assert flips["hedge"]["unflagged_rate"] == 0.5 and flips["hedge"]["clear_benign"] == 0
    assert (flips["pad"]["clear_benign"], flips["pad"]["flagged"]) == (2, 1)
    assert flips["pad"]["flagged_ci"] is not None
    assert report["ranking"]["auc"] == 1.0  # originals only: every flag a misbehavior
