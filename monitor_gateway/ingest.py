"""Turn one Kafka record into a Trajectory, or say exactly why it cannot be one.

Pure functions: no I/O, so every malformed shape is testable without a broker.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pydantic import ValidationError

from .schema import (
    CATEGORIES,
    RUN_MESSAGE,
    DeadLetter,
    DeadLetterError,
    ReplayTag,
    RunEnd,
    RunStart,
    RunStep,
    Trajectory,
    utcnow,
)

REPLAY_RUN = "x-monitor-replay-run"
REPLAY_LABEL = "x-monitor-replay-label"
REPLAY_CATEGORY = "x-monitor-replay-category"
REPLAY_PAIR = "x-monitor-replay-pair"
REPLAY_HEADERS = (REPLAY_RUN, REPLAY_LABEL, REPLAY_CATEGORY, REPLAY_PAIR)
# base64 grows a value by a third; 512 KiB of it stays under Kafka's default 1 MiB limit
DEAD_LETTER_VALUE_MAX = 512 * 1024
M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class Rejection:
    error: DeadLetterError
    detail: str


def parse_trajectory(value: bytes | None, max_bytes: int) -> Trajectory | Rejection:
    """Validate a record value against the CONTRACT's Trajectory schema."""
    return parse(Trajectory.model_validate_json, value, max_bytes)


def parse_run_message(value: bytes | None, max_bytes: int
                      ) -> RunStart | RunStep | RunEnd | Rejection:
    """Validate a step topic's record value: a run's start, one of its steps, or its end."""
    return parse(RUN_MESSAGE.validate_json, value, max_bytes)


def parse(validate: Callable[[str], M], value: bytes | None, max_bytes: int) -> M | Rejection:
    """``value`` validated as JSON by ``validate`` (a model's ``model_validate_json``, an
    adapter's ``validate_json``), or why it is none: records and the guard's requests."""
    if value is None:
        return Rejection("invalid_json", "the record has no value (tombstone)")
    if len(value) > max_bytes:
        return Rejection("too_large", f"{len(value)} bytes is over the limit of {max_bytes}")
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection("invalid_utf8", str(exc))
    try:
        return validate(text)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        if errors and errors[0]["type"] == "json_invalid":
            return Rejection("invalid_json", errors[0]["msg"])
        return Rejection("invalid_schema", summarise(errors))


def summarise(errors: Iterable[object]) -> str:
    """A validation error's errors in one line, each named by where it is."""
    parts = []
    for error in errors:
        assert isinstance(error, dict)
        where = ".".join(str(p) for p in error["loc"]) or "(root)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def replay_tag(headers: dict[str, str]) -> ReplayTag | None:
    """The replay sample's labels, or None for production traffic or unusable headers."""
    run, label, category = (headers.get(h) for h in REPLAY_HEADERS[:3])
    if not run or label not in ("misbehavior", "benign") or category not in CATEGORIES:
        return None
    return ReplayTag.model_validate(
        {"run": run, "label": label, "category": category, "pair": headers.get(REPLAY_PAIR)}
    )


def read_replay(
    raw: Sequence[tuple[str, bytes | None]],
) -> tuple[ReplayTag | None, list[tuple[str, bytes]]]:
    """The replay tag of a record and the headers its verdict echoes.

    Header values are bytes in Kafka and any producer may send any: a value that is null or
    not UTF-8 is treated as absent, so a verdict never claims a replay run it cannot read.
    Headers are echoed only with a valid tag, and only those that were read."""
    if not raw:
        return None, []
    readable: dict[str, str] = {}
    echoed: list[tuple[str, bytes]] = []
    for key, value in raw:
        if key not in REPLAY_HEADERS or value is None:
            continue
        try:
            readable[key] = value.decode("utf-8")
        except UnicodeDecodeError:
            continue
        echoed.append((key, value))
    tag = replay_tag(readable)
    return (tag, echoed) if tag is not None else (None, [])


def dead_letter(
    rejection: Rejection,
    *,
    topic: str,
    partition: int,
    offset: int,
    key: bytes | None,
    value: bytes | None,
    value_max: int = DEAD_LETTER_VALUE_MAX,
) -> DeadLetter:
    return DeadLetter(
        error=rejection.error,
        detail=rejection.detail,
        topic=topic,
        partition=partition,
        offset=offset,
        key=key.decode("utf-8", errors="replace") if key is not None else None,
        value_b64=base64.b64encode((value or b"")[:value_max]).decode("ascii"),
        at=utcnow(),
        value_bytes=len(value or b""),
        value_truncated=len(value or b"") > value_max,
    )
