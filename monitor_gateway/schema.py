"""The messages that cross the gateway's edges, as the contract (``docs/contract.md``) fixes
them.

Inputs are validated strictly (a wrong type is a dead letter, not a coercion); outputs are
serialised with ``model_dump_json`` so every consumer sees the same JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from json.encoder import encode_basestring
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictStr,
    TypeAdapter,
    model_validator,
)

Category = Literal["safety_permission", "sycophancy_bias", "specification_gaming"]
CATEGORIES: tuple[Category, ...] = ("safety_permission", "sycophancy_bias", "specification_gaming")
Severity = Literal["low", "medium", "high"]
TaskType = Literal["qa", "code", "reasoning", "agent"]
ReplayLabel = Literal["misbehavior", "benign"]
# the last two are extensions (docs/messages.md): a verdict that cannot be made to fit the broker's
# message size, and a fault of the gateway's own on one record
# the last two of which are issue 36's: a step message of no open run, and one that skips
# a sequence number
DeadLetterError = Literal["invalid_json", "invalid_utf8", "invalid_schema", "too_large",
                          "verdict_too_large", "internal_error", "unknown_run",
                          "sequence_gap"]
# why a run was judged without its end message (issue 36): silent past RUN_TIMEOUT, or
# the oldest open run when MAX_OPEN_RUNS or MAX_OPEN_RUN_BYTES was reached
Incomplete = Literal["timeout", "open_runs", "open_run_bytes"]


def _iso_millis(value: datetime) -> str:
    """``2026-11-24T00:32:37.149Z``. Two a verdict: %-formatting takes half the time of
    ``isoformat`` on a copy without the zone."""
    if value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (  # noqa: UP031 (see the docstring)
        value.year, value.month, value.day, value.hour, value.minute, value.second,
        value.microsecond // 1000)


Timestamp = Annotated[datetime, PlainSerializer(_iso_millis, return_type=str)]


def utcnow() -> datetime:
    return datetime.now(UTC)


# --- input -------------------------------------------------------------------------------


# one encoder for every call: json.dumps builds a new one whenever an option is given
_ARGUMENTS = json.JSONEncoder(ensure_ascii=False)


def _arguments_json(arguments: dict[str, Any]) -> str:
    """``json.dumps(arguments, ensure_ascii=False)``. Most tool calls' arguments are strings
    by name (``{"cmd": "..."}``): those are joined here from the encoder's own string
    escaping, in half its time (1.3 against 2.4 us a call, paid on every call judged)."""
    if all(type(value) is str for value in arguments.values()):
        return "{" + ", ".join([f"{encode_basestring(name)}: {encode_basestring(value)}"
                                for name, value in arguments.items()]) + "}"
    return _ARGUMENTS.encode(arguments)


class _Input(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)


_TEXT = "arguments_text"  # where a tool call keeps its rendered arguments


class ToolCall(_Input):
    name: StrictStr
    arguments: dict[str, Any] | StrictStr = Field(default_factory=dict)

    @property
    def arguments_text(self) -> str:
        """The text that evidence offsets for ``tool_calls[M].arguments`` point into.

        A string is taken as sent (OpenAI sends arguments as a JSON string); an object is
        rendered as compact-but-readable JSON with keys in the order the agent sent them.
        Rendered once, as ``functools.cached_property`` would, without the lock it takes on
        every first read in Python 3.11 (1.4 us): the monitor and evidence grounding both
        read it.
        """
        arguments = self.arguments
        if isinstance(arguments, str):
            return arguments
        rendered: str | None = self.__dict__.get(_TEXT)
        if rendered is None:
            rendered = self.__dict__[_TEXT] = _arguments_json(arguments)
        return rendered


class Step(_Input):
    role: Literal["system", "user", "assistant", "tool"]
    content: StrictStr = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)

    def texts(self, index: int) -> Iterator[tuple[str, str]]:
        """The step's texts with their evidence ``source`` names, as ``steps[index]``."""
        yield f"steps[{index}].content", self.content
        for j, call in enumerate(self.tool_calls):
            yield f"steps[{index}].tool_calls[{j}].arguments", call.arguments_text


class Trajectory(_Input):
    id: StrictStr = Field(min_length=1, max_length=256)
    request: StrictStr
    response: StrictStr = ""
    steps: list[Step] = Field(default_factory=list)
    task_type: TaskType | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _has_something_to_judge(self) -> Trajectory:
        if not self.response and not self.steps:
            raise ValueError("a trajectory needs a non-empty `response` or non-empty `steps`")
        return self

    def texts(self) -> Iterator[tuple[str, str]]:
        """Every judged text with its evidence ``source`` name, in reading order."""
        yield "request", self.request
        for i, step in enumerate(self.steps):
            yield from step.texts(i)
        yield "response", self.response

    def agent_texts(self) -> Iterator[tuple[str, str]]:
        """The texts the agent produced, with their evidence source names: its own steps,
        tool-call arguments and response; never what a tool returned or a user said, which
        the agent only read. Only these can be evidence of what the agent did."""
        for i, step in enumerate(self.steps):
            if step.role == "assistant":
                yield f"steps[{i}].content", step.content
            for j, call in enumerate(step.tool_calls):
                yield f"steps[{i}].tool_calls[{j}].arguments", call.arguments_text
        yield "response", self.response


# --- step by step (issue 36): a run as it happens, on the step topic ----------------------


class RunStart(_Input):
    """A run's first message (``seq`` 0): what the agent was asked."""

    type: Literal["start"]
    trajectory_id: StrictStr = Field(min_length=1, max_length=256)
    seq: Literal[0]
    request: StrictStr
    task_type: TaskType | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class RunStep(_Input):
    """One step of a run, as it happened: ``seq`` k carries ``steps[k-1]``."""

    type: Literal["step"]
    trajectory_id: StrictStr = Field(min_length=1, max_length=256)
    seq: int = Field(ge=1)
    step: Step


class RunEnd(_Input):
    """A run's last message: ``seq`` is its number of steps plus one."""

    type: Literal["end"]
    trajectory_id: StrictStr = Field(min_length=1, max_length=256)
    seq: int = Field(ge=1)
    response: StrictStr = ""


# any message of the step topic, told apart by ``type``
RunMessage = Annotated[RunStart | RunStep | RunEnd, Field(discriminator="type")]
RUN_MESSAGE: TypeAdapter[RunStart | RunStep | RunEnd] = TypeAdapter(RunMessage)


def run_messages(trajectory: Trajectory) -> list[RunStart | RunStep | RunEnd]:
    """A whole trajectory as the messages that send it step by step."""
    start = RunStart(type="start", trajectory_id=trajectory.id, seq=0,
                     request=trajectory.request, task_type=trajectory.task_type,
                     metadata=trajectory.metadata)
    steps = [RunStep(type="step", trajectory_id=trajectory.id, seq=i + 1, step=step)
             for i, step in enumerate(trajectory.steps)]
    end = RunEnd(type="end", trajectory_id=trajectory.id, seq=len(steps) + 1,
                 response=trajectory.response)
    return [start, *steps, end]


class ReplayTag(BaseModel):
    """What the replay headers say about a benchmark sample. Never shown to a monitor."""

    model_config = ConfigDict(frozen=True)

    run: str
    label: ReplayLabel
    category: Category
    pair: str | None = None


# --- output ------------------------------------------------------------------------------


class Evidence(BaseModel):
    quote: str
    source: str | None = None
    start: int | None = None
    end: int | None = None
    grounded: bool = False


class MonitorCard(BaseModel):
    """Which monitor judged a verdict; ``label`` says it in words (the MST monitor label)."""

    model_config = ConfigDict(frozen=True)

    name: str
    backend: str
    model: str | None = None
    template: str | None = None
    version: str
    label: str


class Latency(BaseModel):
    monitor: float
    gateway: float


class Verdict(BaseModel):
    trajectory_id: str
    flagged: bool
    score: float = Field(ge=0.0, le=1.0)
    threshold: float
    category: Category | None = None
    severity: Severity | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    rationale: str | None = None
    monitor: MonitorCard
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    replay_run: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    received_at: Timestamp
    decided_at: Timestamp
    latency_ms: Latency
    # extension: what was cut so that the verdict fits the broker's message size, e.g.
    # ["metadata", "evidence[2].quote"]; null when nothing was
    cut: list[str] | None = None
    # extension (issue 36): a run sent step by step that was judged without its end
    # message, and why; null for whole trajectories and complete runs
    incomplete: Incomplete | None = None


class StepVerdict(BaseModel):
    """A step of a run that flagged as it streamed in (issue 36): evidence offsets point
    into that step's texts (``steps[N].content``, ``steps[N].tool_calls[M].arguments``)."""

    trajectory_id: str
    seq: int
    step: int  # N: the index of the step in the run's steps
    flagged: bool
    score: float = Field(ge=0.0, le=1.0)
    threshold: float
    category: Category | None = None
    severity: Severity | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    rationale: str | None = None
    monitor: MonitorCard
    replay_run: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    received_at: Timestamp
    decided_at: Timestamp
    latency_ms: Latency


class DeadLetter(BaseModel):
    error: DeadLetterError
    detail: str
    topic: str
    partition: int
    offset: int
    key: str | None = None
    value_b64: str
    at: Timestamp
    # extensions: a dead letter must fit the broker's message size, so a huge value is cut
    value_bytes: int | None = None  # always set by the gateway
    value_truncated: bool = False


# --- review: requests for a reviewer's judgement, and the labels they give ---------------

Decision = Literal["misbehavior", "benign"]
SpanJudgement = Literal["confirmed", "rejected", "added"]


class Sampling(BaseModel):
    """How a verdict came to be picked for review: with what probability (what the
    estimates weight a label by), in which stratum, and why."""

    model_config = ConfigDict(frozen=True)

    probability: float = Field(gt=0.0, le=1.0)
    stratum: str  # "flagged|unflagged/<category or none>/<score band>"
    reason: Literal["stratified", "uncertainty"]


class ReviewRequest(BaseModel):
    """A verdict picked for review, with the trajectory it judged (``null`` when the
    sampler could not read it from the input topic)."""

    id: str  # "<trajectory id>@<monitor version>": consumers dedupe on it
    verdict: Verdict
    trajectory: Trajectory | None = None
    sampling: Sampling
    requested_at: Timestamp


class ReviewedSpan(BaseModel):
    """A quote the reviewer judged: one of the verdict's (``confirmed`` or ``rejected``)
    or one they ``added``; offsets as in a verdict's evidence, ``text[start:end] ==
    quote`` in ``source``."""

    quote: str
    source: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    judgement: SpanJudgement


class Label(BaseModel):
    """A reviewer's judgement of one verdict: the durable record every production figure
    is computed from. The latest label of a (``trajectory_id``, ``monitor.version``) wins."""

    trajectory_id: str
    request_id: str
    monitor: MonitorCard
    verdict: Verdict  # the verdict judged
    decision: Decision
    category: Category | None = None
    evidence: list[ReviewedSpan] = Field(default_factory=list)
    note: str = ""
    reviewer: str
    labelled_at: Timestamp
    inclusion_probability: float = Field(gt=0.0, le=1.0)
    stratum: str


# --- the pre-execution guard: a proposed tool call, allowed or blocked --------------------

GuardAnswer = Literal["allow", "block"]


class GuardRequest(_Input):
    """A run so far and the tool call its agent proposes next. ``trajectory`` has a
    Trajectory's fields, its ``response`` and ``steps`` possibly empty (the run is not
    over): it is validated as a Trajectory once the call is appended (:meth:`judged`)."""

    trajectory: dict[str, Any]
    call: ToolCall

    def judged(self) -> Trajectory:
        """The run with the proposed call appended as an assistant step, the last one
        (raises ``ValidationError`` when the run is no trajectory)."""
        steps = self.trajectory.get("steps", [])
        proposed = Step(role="assistant", tool_calls=[self.call])
        return Trajectory.model_validate(
            {**self.trajectory, "steps": [*steps, proposed] if isinstance(steps, list) else steps})


class GuardDecision(BaseModel):
    """The guard's answer, also published to the decision topic. ``step`` is the proposed
    call's step in the judged run: evidence quoting the call has the source
    ``steps[<step>].tool_calls[0].arguments``. ``verdict`` is the judgement as a verdict of
    the run with the call appended; an error verdict (timeout, monitor error, backend down)
    blocks under ``FAIL_POLICY=closed`` and allows under ``open``."""

    decision: GuardAnswer
    step: int = Field(ge=0)
    call: ToolCall
    verdict: Verdict
