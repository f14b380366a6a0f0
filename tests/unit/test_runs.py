"""Open runs (issue 36): what each step topic record is to its run, and the bounds."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from aiokafka import ConsumerRecord, TopicPartition
from paths import ROOT

from monitor_gateway.evidence import ground_in
from monitor_gateway.ingest import Rejection
from monitor_gateway.monitors.offline import from_settings
from monitor_gateway.offsets import Ticket
from monitor_gateway.pipeline import Work
from monitor_gateway.runs import Duplicate, Ended, Held, Runs
from monitor_gateway.schema import (
    RUN_MESSAGE,
    RunStart,
    RunStep,
    Step,
    StepVerdict,
    Trajectory,
    run_messages,
    utcnow,
)
from monitor_gateway.settings import GatewaySettings
from replay.sources import resolve

P0, P1 = TopicPartition("steps", 0), TopicPartition("steps", 1)


def works(trajectory: Trajectory, partition: TopicPartition = P0, first: int = 0) -> list[Work]:
    out = []
    for offset, message in enumerate(run_messages(trajectory), start=first):
        value = message.model_dump_json(exclude_defaults=True).encode()
        record = ConsumerRecord(partition.topic, partition.partition, offset, 0, 0,
                                trajectory.id.encode(), value, None, len(value),
                                len(value), [])
        out.append(Work(record, Ticket(partition, 1, offset), utcnow(), 0.0, None))
    return out


def run(run_id: str, steps: int = 2) -> Trajectory:
    return Trajectory(id=run_id, request="r", response="done", steps=[
        Step(role="assistant", content=f"step {i}") for i in range(steps)])


def runs(max_open: int = 100, max_bytes: int = 10**9, timeout: float = 60.0) -> Runs:
    return Runs(max_open, max_bytes, timeout, max_message_bytes=10**6)


def test_a_run_sent_step_by_step_is_the_trajectory_sent_whole() -> None:
    """Every run of the realistic test split, through the messages and back."""
    for sample in resolve("realistic", "test"):
        trajectory = Trajectory.model_validate(sample.trajectory())
        held = runs()
        *middle, last = [held.receive(work)[0] for work in works(trajectory)]
        assert all(isinstance(r, Held) for r in middle)
        assert isinstance(last, Ended) and last.run.trajectory() == trajectory
        assert held.open == {} and held.size == 0


def test_duplicates_are_skipped_and_a_gap_or_a_stray_step_is_refused() -> None:
    held = runs()
    start, one, two, end = works(run("a"))
    assert isinstance(held.receive(start)[0], Held)
    assert isinstance(held.receive(start)[0], Duplicate)
    assert held.receive(one)[0] == Held(held.open["a"], 0)
    assert isinstance(held.receive(one)[0], Duplicate)
    gap = held.receive(end)[0]
    assert isinstance(gap, Rejection) and gap.error == "sequence_gap"
    assert isinstance(held.receive(two)[0], Held)
    assert isinstance(held.receive(end)[0], Ended)
    assert isinstance(held.receive(end)[0], Duplicate)  # after its end: remembered
    stray = held.receive(works(run("b"))[1])[0]
    assert isinstance(stray, Rejection) and stray.error == "unknown_run"
    start = works(run("c"))[0]
    elsewhere = start._replace(record=dataclasses.replace(start.record, key=b"other"))
    misplaced = held.receive(elsewhere)[0]
    assert isinstance(misplaced, Rejection) and misplaced.error == "invalid_schema"


def test_the_oldest_run_is_closed_as_incomplete_past_a_bound() -> None:
    held = runs(max_open=2)
    for name in "abc":
        _, closed = held.receive(works(run(name))[0])
    assert [r.id for r in closed] == ["a"] and closed[0].incomplete == "open_runs"
    assert list(held.open) == ["b", "c"]
    # a step of the closed run after it was judged is refused, one it had is a duplicate
    late = held.receive(works(run("a"))[1])[0]
    assert isinstance(late, Rejection) and late.error == "unknown_run"
    assert isinstance(held.receive(works(run("a"))[0])[0], Duplicate)

    by_bytes = runs(max_bytes=200)  # a: 58 + 90 bytes, b: 58
    a, b = works(run("a")), works(run("b"))
    for work in (a[0], a[1], b[0]):
        _, closed = by_bytes.receive(work)
    assert [(r.id, r.incomplete) for r in closed] == [("a", "open_run_bytes")]
    assert by_bytes.size == len(b[0].record.value or b"")


def test_a_silent_run_expires_and_a_revoked_partition_is_forgotten() -> None:
    held = runs(timeout=5.0)
    a, b = works(run("a")), works(run("b"), P1)
    held.receive(a[0])
    held.receive(b[0])
    last = held.open["b"].last
    assert held.expired(last + 1) == []
    expired = held.expired(last + 6)
    assert [(r.id, r.incomplete) for r in expired] == [("a", "timeout"), ("b", "timeout")]
    with pytest.raises(ValueError):  # no step: nothing to judge (an error verdict)
        expired[0].trajectory()
    held = runs()
    held.receive(a[0])
    held.receive(b[0])
    held.forget({P1})
    assert list(held.open) == ["a"] and held.held() == 1
    assert isinstance(held.receive(b[0])[0], Held)  # read again from its start


def test_the_contracts_step_examples_are_what_the_gateway_reads_and_writes() -> None:
    """The extension's run messages parse; its step verdict is the offline monitor's on
    their step (score, category, severity, rationale and evidence), every field of it."""
    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    section = text[text.index("## Extension: step-by-step monitoring (issue 36)"):]
    start, step, end, verdict, *_ = re.findall(r"```json\n(.*?)```", section, re.S)
    messages = [RUN_MESSAGE.validate_json(block) for block in (start, step, end)]
    assert [m.type for m in messages] == ["start", "step", "end"]
    opened, stepped = messages[0], messages[1]
    assert isinstance(opened, RunStart) and isinstance(stepped, RunStep)
    example = json.loads(verdict)
    assert set(json.loads(StepVerdict.model_validate(example).model_dump_json())) == \
        set(example)
    judged = from_settings(GatewaySettings()).judge_step(opened.request, [stepped.step], 0)
    assert judged is not None
    assert (judged.score, judged.category, judged.severity, judged.rationale) == (
        example["score"], example["category"], example["severity"], example["rationale"])
    assert [e.model_dump() for e in ground_in(dict(stepped.step.texts(0)), judged.quotes)] \
        == example["evidence"]
