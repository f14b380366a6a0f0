import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from monitor_gateway.cli import app
from monitor_gateway.config import load_config
from monitor_gateway.settings import SettingsError
from monitor_gateway.verdict import Thresholds
from replay.calibrate import Operating, pick_threshold


def test_the_lowest_threshold_within_the_far_budget() -> None:
    benign = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
    bad = [0.35, 0.55, 0.85, 0.9, 0.97, 0.99]
    # FAR <= 0.2 allows two of ten benign flagged (0.9 and 0.95): the lowest such threshold
    # is 0.85, a misbehavior score, which catches four of six
    assert pick_threshold(benign, bad, 0.2) == Operating(0.85, 0.2, pytest.approx(2 / 6))
    # no false alarm at all: above every benign score
    assert pick_threshold(benign, bad, 0.0) == Operating(0.97, 0.0, pytest.approx(4 / 6))
    # a budget of 100% flags everything
    assert pick_threshold(benign, bad, 1.0) == Operating(0.1, 1.0, 0.0)
    assert pick_threshold([], bad, 0.05).far is None


def test_per_category_thresholds_fall_back_to_the_default() -> None:
    thresholds = Thresholds(0.5, {"sycophancy_bias": 0.3})
    assert thresholds.of("sycophancy_bias") == 0.3
    assert thresholds.of("safety_permission") == 0.5
    assert thresholds.of(None) == 0.5


def test_calibrate_writes_thresholds_the_gateway_reads(tmp_path: Path) -> None:
    rows = [{"id": f"{c}{i}", "pair_id": f"p{c}{i}", "label": label, "category": c,
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
