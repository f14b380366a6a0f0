import json

import pytest

from monitor_gateway.ingest import Rejection, dead_letter, parse_trajectory, replay_tag
from monitor_gateway.schema import Trajectory

LIMIT = 1024 * 1024


def parse(value: object) -> Trajectory | Rejection:
    return parse_trajectory(json.dumps(value).encode(), LIMIT)


def test_a_full_trajectory_parses_with_every_field() -> None:
    trajectory = parse({
        "id": "traj-1", "request": "q", "response": "a", "task_type": "agent",
        "steps": [{"role": "assistant", "content": "c",
                   "tool_calls": [{"name": "bash", "arguments": {"cmd": "ls"}}]},
                  {"role": "tool", "content": "out"}],
        "metadata": {"agent": "a"},
    })
    assert isinstance(trajectory, Trajectory)
    assert trajectory.steps[0].tool_calls[0].arguments == {"cmd": "ls"}
    assert dict(trajectory.texts())["steps[0].tool_calls[0].arguments"] == '{"cmd": "ls"}'


@pytest.mark.parametrize("arguments", [
    {},
    {"cmd": "ls"},
    {"cmd": 'echo "a\\b"\n\t\x00\x1f', "path": "caf\u00e9/\u2028/\U0001f600"},
    {"path": "a.py", "line": 3, "dry_run": False, "extra": None, "ratio": 0.5},
    {"edits": [{"old": "x", "new": "y"}], "opts": {"force": True}},
], ids=["empty", "one string", "escapes", "mixed values", "nested"])
def test_evidence_offsets_in_object_arguments_point_into_their_json(
        arguments: dict[str, object]) -> None:
    # the text docs/messages.md documents for offsets into an object's arguments
    call = {"name": "bash", "arguments": arguments}
    trajectory = parse({"id": "t", "request": "q", "steps": [
        {"role": "assistant", "content": "", "tool_calls": [call]}]})
    assert isinstance(trajectory, Trajectory)
    text = dict(trajectory.texts())["steps[0].tool_calls[0].arguments"]
    assert text == json.dumps(arguments, ensure_ascii=False)
    assert trajectory.steps[0].tool_calls[0].arguments_text is text  # rendered once


@pytest.mark.parametrize(("value", "error", "detail"), [
    (b"", "invalid_json", "EOF"),
    (b"{", "invalid_json", "EOF"),
    (b"\xc3\x28", "invalid_utf8", "can't decode"),
    (b'"just a string"', "invalid_schema", "(root)"),
    (json.dumps({"request": "q", "response": "a"}).encode(), "invalid_schema",
     "id: Field required"),
    (json.dumps({"id": "", "request": "q", "response": "a"}).encode(), "invalid_schema", "id:"),
    (json.dumps({"id": "x" * 257, "request": "q", "response": "a"}).encode(),
     "invalid_schema", "at most 256"),
    (json.dumps({"id": "i", "request": 5, "response": "a"}).encode(), "invalid_schema", "request"),
    (json.dumps({"id": "i", "request": "q", "response": ""}).encode(), "invalid_schema",
     "non-empty `response` or non-empty `steps`"),
    (json.dumps({"id": "i", "request": "q", "response": "a", "task_type": "chat"}).encode(),
     "invalid_schema", "task_type"),
    (json.dumps({"id": "i", "request": "q", "steps": [{"role": "bot"}]}).encode(),
     "invalid_schema", "steps.0.role"),
    (None, "invalid_json", "tombstone"),
])
def test_each_malformed_shape_is_named(value: bytes | None, error: str, detail: str) -> None:
    rejection = parse_trajectory(value, LIMIT)
    assert isinstance(rejection, Rejection)
    assert rejection.error == error
    assert detail in rejection.detail


def test_the_size_limit_is_checked_before_parsing() -> None:
    value = json.dumps({"id": "i", "request": "q", "response": "a" * 100}).encode()
    assert isinstance(parse_trajectory(value, len(value)), Trajectory)
    rejection = parse_trajectory(value, len(value) - 1)
    assert rejection == Rejection("too_large", f"{len(value)} bytes is over the limit of "
                                               f"{len(value) - 1}")


def test_a_huge_dead_letter_value_is_cut_to_fit_the_broker() -> None:
    value = b"x" * (2 * 1024 * 1024)
    letter = dead_letter(Rejection("too_large", "big"), topic="t", partition=0, offset=1,
                         key=b"k", value=value)
    assert letter.value_truncated and letter.value_bytes == len(value)
    assert len(letter.model_dump_json()) < 1024 * 1024


def test_replay_headers_become_a_tag_only_when_complete() -> None:
    headers = {"x-monitor-replay-run": "r1", "x-monitor-replay-label": "benign",
               "x-monitor-replay-category": "sycophancy_bias", "x-monitor-replay-pair": "p1"}
    tag = replay_tag(headers)
    assert tag is not None and (tag.run, tag.label, tag.category, tag.pair) == (
        "r1", "benign", "sycophancy_bias", "p1")
    assert replay_tag({}) is None
    assert replay_tag({**headers, "x-monitor-replay-label": "maybe"}) is None
    assert replay_tag({**headers, "x-monitor-replay-category": "other"}) is None
