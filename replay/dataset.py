"""Benchmark files: labelled samples in the contract's JSONL format.

Samples come in misbehavior/benign pairs answering the same request, as AutoMonitor-Bench
measures them, or unpaired (an extension: production labels rarely come in pairs, and MR
needs only misbehavior samples, FAR only benign ones). A misbehavior sample may carry
gold evidence: the spans that show it, grounded here with exact offsets.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from monitor_gateway.schema import (
    CATEGORIES,
    Category,
    Label,
    ReplayLabel,
    Step,
    TaskType,
    Trajectory,
)


class DatasetError(ValueError):
    """A benchmark file that breaks the format; the message names the line and the reason."""


class GoldSpan(BaseModel):
    """A span that shows the misbehavior: ``quote`` as it stands in ``source`` (a Verdict
    evidence source name; searched in reading order when absent). The loader sets
    ``start``/``end`` so that ``text[start:end] == quote``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    quote: str = Field(min_length=1)
    source: str | None = None
    start: int | None = None
    end: int | None = None


class Sample(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, max_length=256)
    pair_id: str | None = Field(default=None, min_length=1)  # None: an unpaired sample
    label: ReplayLabel
    category: Category
    task_type: TaskType | None = None
    request: str
    response: str = ""
    steps: list[Step] = Field(default_factory=list)
    source: str | None = None
    split: Literal["train", "test", "dev"] | None = None
    gold_evidence: list[GoldSpan] = Field(default_factory=list)

    def trajectory(self) -> dict[str, object]:
        """What the gateway is sent: the trajectory alone, the labels travel in headers."""
        body: dict[str, object] = {"id": self.id, "request": self.request,
                                   "response": self.response,
                                   "steps": [s.model_dump(exclude_defaults=True)
                                             for s in self.steps]}
        if self.task_type:
            body["task_type"] = self.task_type
        return body


def parse_fields(specs: list[str]) -> dict[str, str]:
    """``--field request=question`` options: our field name = the file's field name."""
    mapping = {}
    for spec in specs:
        ours, _, theirs = spec.partition("=")
        if not theirs or ours not in Sample.model_fields:
            raise DatasetError(f"--field {spec!r}: expected OURS=THEIRS with OURS one of "
                               f"{', '.join(Sample.model_fields)}")
        mapping[ours] = theirs
    return mapping


def _rename(row: object, fields: dict[str, str]) -> object:
    if not fields or not isinstance(row, dict):
        return row
    renamed = {k: v for k, v in row.items() if k not in fields.values()}
    renamed.update({ours: row[theirs] for ours, theirs in fields.items() if theirs in row})
    return renamed


def parse_lines(lines: list[str], name: str, fields: dict[str, str] | None = None
                ) -> list[Sample]:
    """Samples from JSONL text (or one JSON array), then the pairing rules checked."""
    text = "\n".join(lines).strip()
    if text.startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{name}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        numbered = [(i + 1, row) for i, row in enumerate(rows)]
        where = "item"
    else:
        numbered = []
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    numbered.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{name}:{number}: not valid JSON: {exc.msg}") from None
        where = "line"
    samples = []
    for number, row in numbered:
        try:
            sample = Sample.model_validate(_rename(row, fields or {}))
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in error["loc"]) or "(root)"
            raise DatasetError(f"{name}: {where} {number}: {field}: {error['msg']}") from None
        try:
            samples.append(ground_gold(sample))
        except ValueError as exc:
            raise DatasetError(f"{name}: {where} {number}: {exc}") from None
    check_pairs(samples, name)
    return samples


def ground_gold(sample: Sample) -> Sample:
    """The sample with its gold spans' exact offsets; a quote that is not in the trajectory
    (or not in the source it names) is refused."""
    if not sample.gold_evidence:
        return sample
    texts = dict(Trajectory.model_validate(sample.trajectory()).texts())
    grounded = []
    for i, span in enumerate(sample.gold_evidence):
        if span.source is not None and span.source not in texts:
            raise ValueError(f"gold_evidence.{i}.source: no {span.source!r} in the trajectory")
        order = [span.source] if span.source is not None else list(texts)
        found = [(source, texts[source].find(span.quote)) for source in order]
        hits = [(source, start) for source, start in found if start >= 0]
        if not hits:
            where = f"in {span.source}" if span.source else "anywhere in the trajectory"
            raise ValueError(f"gold_evidence.{i}: quote {span.quote[:60]!r} is not {where}")
        source, start = hits[0]
        grounded.append(span.model_copy(update={"source": source, "start": start,
                                                "end": start + len(span.quote)}))
    return sample.model_copy(update={"gold_evidence": grounded})


def load(path: Path, fields: dict[str, str] | None = None) -> list[Sample]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    return parse_lines(lines, str(path), fields)


def write(samples: list[Sample], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for sample in samples:
            out.write(sample.model_dump_json(exclude_none=True) + "\n")


def check_pairs(samples: list[Sample], name: str) -> None:
    """Ids are unique; each pair has one misbehavior and one benign sample with the same
    request (unpaired samples are checked for nothing more)."""
    pairs: dict[str, list[Sample]] = defaultdict(list)
    seen: set[str] = set()
    for sample in samples:
        if sample.id in seen:
            raise DatasetError(f"{name}: sample id {sample.id!r} appears twice")
        seen.add(sample.id)
        if sample.pair_id is not None:
            pairs[sample.pair_id].append(sample)
    for pair_id, members in pairs.items():
        labels = sorted(s.label for s in members)
        if labels != ["benign", "misbehavior"]:
            raise DatasetError(f"{name}: pair {pair_id!r} must have one misbehavior and one "
                               f"benign sample, has {labels}")
        if members[0].request != members[1].request:
            raise DatasetError(f"{name}: pair {pair_id!r} has two different requests")


def reviewed_samples(reviewed: Iterable[tuple[Label, Trajectory]]) -> list[Sample]:
    """Reviewed production trajectories as samples: the reviewer's decision and category,
    the quotes they confirmed or added as gold evidence. A benign one without a category
    takes the verdict's, else the first: training reads the category of misbehavior only."""
    return [Sample(id=label.trajectory_id, label=label.decision,
                   category=label.category or label.verdict.category or CATEGORIES[0],
                   task_type=trajectory.task_type, request=trajectory.request,
                   response=trajectory.response, steps=list(trajectory.steps),
                   source=f"production/{label.monitor.version}",
                   gold_evidence=[GoldSpan(quote=span.quote, source=span.source,
                                           start=span.start, end=span.end)
                                  for span in label.evidence if span.judgement != "rejected"])
            for label, trajectory in reviewed]


def held_out_half(sample: Sample) -> bool:
    """Whether a reviewed sample is held out from training (half of them, fixed by id)."""
    return hashlib.sha256(sample.id.encode()).digest()[0] % 2 == 1
