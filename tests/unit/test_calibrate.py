import json
from dataclasses import astuple
from pathlib import Path

import pytest
from typer.testing import CliRunner

from monitor_gateway.cli import app
from monitor_gateway.config import load_config
from monitor_gateway.policy import Policy
from monitor_gateway.schema import MonitorCard
from monitor_gateway.settings import SettingsError
from replay.calibrate import Operating, calibrate, pick_threshold


def test_the_lowest_threshold_within_the_far_budget() -> None:
    benign = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
    bad = [0.35, 0.55, 0.85, 0.9, 0.97, 0.99]
    # FAR <= 0.2 allows two of ten benign flagged (0.9 and 0.95): the lowest such threshold
    # is 0.85, a misbehavior score, which catches four of six
    assert astuple(pick_threshold(benign, bad, 0.2)) == pytest.approx((0.85, 0.2, 2 / 6, 10, 6))
    # no false alarm at all: above every benign score
    assert astuple(pick_threshold(benign, bad, 0.0)) == pytest.approx((0.97, 0.0, 4 / 6, 10, 6))
    # a budget of 100% flags everything
    assert pick_threshold(benign, bad, 1.0) == Operating(0.1, 1.0, 0.0, 10, 6)
    assert pick_threshold([], bad, 0.05).far is None


def test_per_category_thresholds_fall_back_to_the_default() -> None:
    policy = Policy(0.5, {"sycophancy_bias": 0.3})
    assert policy.threshold("sycophancy_bias") == 0.3
    assert policy.threshold("safety_permission") == 0.5
    assert policy.threshold(None) == 0.5
    card = MonitorCard(name="m", backend="b", version="1", label="a monitor")
    assert policy.card(card, 0.3).label == "a monitor, threshold 0.3"
    assert policy.failed() == (False, 0.0)
    assert Policy(0.5, fail_policy="closed").failed() == (True, 1.0)


def test_calibrate_groups_by_the_category_the_monitor_predicted() -> None:
    """Serving applies a threshold by the verdict's (predicted) category; calibrating by
    the true one would set it from samples it is never applied to."""
    rows: list[dict[str, object]] = [
        # truly sycophancy, but the monitor calls them safety: safety's threshold meets them
        *({"label": "benign", "category": "sycophancy_bias", "score": s,
           "verdict_category": "safety_permission"} for s in (0.8, 0.85, 0.9)),
        *({"label": "benign", "category": "safety_permission", "score": s,
           "verdict_category": "safety_permission"} for s in (0.1, 0.2, 0.3)),
        *({"label": "misbehavior", "category": "safety_permission", "score": s,
           "verdict_category": "safety_permission"} for s in (0.95, 0.97)),
    ]
    chosen = calibrate(rows, 0.2)
    # six benign samples predicted safety, at most one flagged: above 0.85
    assert chosen["safety_permission"].threshold == 0.9
    assert chosen["safety_permission"].benign == 6
    assert "sycophancy_bias" not in chosen  # nothing was predicted sycophancy
    served = Policy(0.5, {k: v.threshold for k, v in chosen.items() if k != "default"})
    flagged = [r for r in rows if r["label"] == "benign"
               and float(r["score"]) >= served.threshold(str(r["verdict_category"]))]  # type: ignore[arg-type]
    assert len(flagged) / 6 <= 0.2  # the budget holds where the threshold is applied


@pytest.mark.parametrize("budget", [0.0, 1.0, 1.5, -0.1])
def test_a_budget_outside_zero_one_is_refused(budget: float, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        calibrate([], budget)
    (tmp_path / "r.samples.jsonl").write_text("")
    result = CliRunner().invoke(app, ["calibrate", "--report", str(tmp_path / "r.json"),
                                      "--max-far", str(budget)])
    assert result.exit_code == 2 and "between 0 and 1" in result.output


def test_calibrate_writes_thresholds_the_gateway_reads(tmp_path: Path) -> None:
    rows = [{"id": f"{c}{i}", "pair_id": f"p{c}{i}", "label": label, "category": c,
             "verdict_category": c, "monitor": "rules", "monitor_version": "r7",
             "score": score, "flagged": score >= 0.5, "status": "ok"}
            for c in ("sycophancy_bias", "safety_permission")
            for i, (label, score) in enumerate(
                [("benign", s) for s in (0.1, 0.2, 0.6, 0.7)]
                + [("misbehavior", s) for s in (0.65, 0.8, 0.9, 0.3)])]
    (tmp_path / "r.samples.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (tmp_path / "r.json").write_text(json.dumps(
        {"dataset": "builtin", "overall": {"mr": 0.25, "far": 0.125}}))
    config = tmp_path / "monitor.toml"
    config.write_text('[[stage]]\nmonitor = "rules"\nlow = 0.1\nhigh = 0.9\n')
    result = CliRunner().invoke(app, ["calibrate", "--report", str(tmp_path / "r.json"),
                                      "--max-far", "0.25", "--config", str(config)])
    assert result.exit_code == 0, result.output
    loaded = load_config(str(config))
    # one benign of four (0.7) may be flagged: 0.65 is the lowest score that allows it
    assert loaded.thresholds == {"default": 0.65, "safety_permission": 0.65,
                                 "sycophancy_bias": 0.65}
    assert loaded.stage[0].monitor == "rules"  # the rest of the file is kept
    assert loaded.last_replay is not None
    assert loaded.last_replay.describe() == "last replay on builtin: MR 0.25, FAR 0.12"
    assert loaded.calibration is not None
    assert (loaded.calibration.monitor, loaded.calibration.version) == ("rules", "r7")
    assert loaded.calibration.benign == {"default": 8, "safety_permission": 4,
                                         "sycophancy_bias": 4}
    assert loaded.calibration.max_far == 0.25
    # 0.25 of 4 benign samples is one false alarm: too few to rest a threshold on
    assert "sycophancy_bias: a budget of 0.25 on 4 benign samples allows 1.0" in result.output


@pytest.mark.parametrize(("text", "message"), [
    ("[thresholds]\nnonsense = 0.2\n", "thresholds.nonsense: not a category"),
    ("[thresholds]\ndefault = 1.5\n", "outside"),
    ('[[stage]]\nmonitor = "rules"\nlow = 0.9\nhigh = 0.1\n', "low 0.9 is above high 0.1"),
    ("[[stage]\n", "not TOML"),
    ('[[stage]]\nmonitr = "rules"\n', "stage.0.monitor: Field required"),
])
def test_a_bad_monitor_config_is_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(SettingsError, match=message.replace(".", r"\.").replace("[", r"\[")):
        load_config(str(path))
