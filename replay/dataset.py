"""Benchmark files: labelled misbehavior/benign pairs in the CONTRACT's JSONL format."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from monitor_gateway.schema import Category, ReplayLabel, Step, TaskType


class DatasetError(ValueError):
    """A benchmark file that breaks the format; the message names the line and the reason."""


class Sample(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, max_length=256)
    pair_id: str = Field(min_length=1)
    label: ReplayLabel
    category: Category
    task_type: TaskType | None = None
    request: str
    response: str = ""
    steps: list[Step] = Field(default_factory=list)
    source: str | None = None
    split: Literal["train", "test"] | None = None

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
            samples.append(Sample.model_validate(_rename(row, fields or {})))
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in error["loc"]) or "(root)"
            raise DatasetError(f"{name}: {where} {number}: {field}: {error['msg']}") from None
    check_pairs(samples, name)
    return samples


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
    """Each pair has one misbehavior and one benign sample with the same request."""
    pairs: dict[str, list[Sample]] = defaultdict(list)
    seen: set[str] = set()
    for sample in samples:
        if sample.id in seen:
            raise DatasetError(f"{name}: sample id {sample.id!r} appears twice")
        seen.add(sample.id)
        pairs[sample.pair_id].append(sample)
    for pair_id, members in pairs.items():
        labels = sorted(s.label for s in members)
        if labels != ["benign", "misbehavior"]:
            raise DatasetError(f"{name}: pair {pair_id!r} must have one misbehavior and one "
                               f"benign sample, has {labels}")
        if members[0].request != members[1].request:
            raise DatasetError(f"{name}: pair {pair_id!r} has two different requests")
