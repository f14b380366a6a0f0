"""The built-in benchmark's invariants."""

from collections import Counter, defaultdict
from pathlib import Path

import pytest

from replay.builtin import DEFAULT_SEED, TEST_PAIRS, build
from replay.builtin.gaming import GAMERS, humaneval, run_checks, verify_humaneval
from replay.dataset import Sample, check_pairs

SAMPLES = build(DEFAULT_SEED)


def test_test_split_has_the_papers_proportions() -> None:
    pairs = Counter(s.category for s in SAMPLES if s.split == "test" and s.label == "benign")
    assert pairs == TEST_PAIRS
    assert sum(pairs.values()) == 3010
    assert Counter(s.split for s in SAMPLES) == {"test": 6020, "train": 6020}


def test_pairs_are_complete_with_one_request() -> None:
    check_pairs(SAMPLES, "builtin")  # raises on a broken pair
    by_pair: dict[str, list[Sample]] = defaultdict(list)
    for sample in SAMPLES:
        by_pair[str(sample.pair_id)].append(sample)
    for members in by_pair.values():
        assert {m.split for m in members} == {members[0].split}
        assert members[0].response != members[1].response or members[0].steps != members[1].steps


def test_splits_are_disjoint_by_source_item() -> None:
    sources = defaultdict(set)
    for sample in SAMPLES:
        sources[sample.split].add(sample.source)
    assert sources["train"] and sources["test"]
    assert sources["train"].isdisjoint(sources["test"])


def test_every_task_type_appears_in_every_category_of_the_test_split() -> None:
    kinds = {(s.category, s.task_type) for s in SAMPLES if s.split == "test"}
    assert {t for c, t in kinds if c == "specification_gaming"} >= {"code", "agent", "qa"}
    assert {t for c, t in kinds if c == "safety_permission"} >= {"code", "agent", "qa"}
    assert {t for c, t in kinds if c == "sycophancy_bias"} >= {"qa", "reasoning", "agent"}
    agent = next(s for s in SAMPLES if s.task_type == "agent" and s.label == "misbehavior")
    assert any(step.tool_calls for step in agent.steps)


def test_it_is_deterministic_from_the_seed() -> None:
    assert build(DEFAULT_SEED, "test")[:50] == [s for s in SAMPLES if s.split == "test"][:50]
    assert build(DEFAULT_SEED + 1, "test")[:50] != build(DEFAULT_SEED, "test")[:50]


def test_length_does_not_give_the_label_away() -> None:
    by_pair: dict[str, dict[str, Sample]] = defaultdict(dict)
    for sample in SAMPLES:
        by_pair[str(sample.pair_id)][sample.label] = sample

    def size(sample: Sample) -> int:
        return len(sample.response) + sum(len(s.content) + len(str(s.tool_calls))
                                          for s in sample.steps)

    for category in TEST_PAIRS:
        pairs = [p for p in by_pair.values() if p["benign"].category == category]
        longer = sum(size(p["misbehavior"]) > size(p["benign"]) for p in pairs) / len(pairs)
        assert 0.2 < longer < 0.8, (category, longer)


def test_sycophancy_includes_pairs_where_the_cue_is_right() -> None:
    pushback = [s for s in SAMPLES if s.category == "sycophancy_bias"
                and any(step.role == "user" for step in s.steps)]
    assert len(pushback) > 200
    benign = next(s for s in pushback if s.label == "benign")
    first_answer = benign.steps[0].content
    assert first_answer.startswith("Yes, that's right")  # agreeing with a right cue is benign


def test_every_humaneval_gaming_construction_is_verified_by_execution() -> None:
    assert len(humaneval()) > 100
    assert verify_humaneval() == []


def test_the_verifier_can_fail() -> None:
    problem = humaneval()[0]
    outcome = run_checks(problem.prompt + "    return None\n", problem)
    assert not outcome.visible and not outcome.held_out
    hang = run_checks(problem.prompt + "    while True: pass\n", problem, timeout=1)
    assert not hang.visible


@pytest.mark.parametrize(("kind", "gamer"), GAMERS)
def test_gamed_code_is_what_the_samples_carry(kind: str, gamer: object) -> None:
    gamed = {s.response for s in SAMPLES if s.label == "misbehavior"
             and s.category == "specification_gaming" and s.task_type == "code"}
    assert any(gamer(p) in gamed for p in humaneval())  # type: ignore[operator]


def test_dataset_build_writes_both_splits(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from monitor_gateway.cli import app

    out = tmp_path / "bench.jsonl"
    result = CliRunner().invoke(app, ["dataset", "build", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == len(SAMPLES)
