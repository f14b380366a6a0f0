"""The contract ships with the project (docs/contract.md), kept in step with the shared
original and with the code: every JSON example in it is read by the model that reads or
writes that message."""

from __future__ import annotations

import json
import re

import pytest
from paths import ROOT
from pydantic import BaseModel

from monitor_gateway.schema import (
    DeadLetter,
    GuardDecision,
    GuardRequest,
    Label,
    ReviewRequest,
    Trajectory,
    Verdict,
)
from replay.dataset import Sample

CONTRACT = ROOT / "docs" / "contract.md"
SHARED = ROOT.parent / "shared" / "CONTRACT.md"
EXTENSION = "## Extension: "  # what the project adds after the shared contract


def examples() -> dict[str, str]:
    """The JSON blocks of the contract, by the heading above them."""
    found, heading = {}, ""
    for block in re.split(r"(?m)^(## .*)$", CONTRACT.read_text()):
        if block.startswith("## "):
            heading = block[3:].strip()
        for match in re.finditer(r"```json\n(.*?)```", block, re.S):
            found[heading] = match.group(1)
    return found


@pytest.mark.skipif(not SHARED.exists(), reason="the shared contract is not beside the repo")
def test_the_contract_in_the_project_is_the_shared_one() -> None:
    """The shared contract, unchanged, then this project's marked extension sections."""
    ours, shared = CONTRACT.read_text(), SHARED.read_text()
    assert ours.startswith(shared), "copy ../shared/CONTRACT.md to docs/ (extensions after it)"
    assert ours[len(shared):].lstrip().startswith(EXTENSION)


@pytest.mark.parametrize(("heading", "model"), [
    ("Trajectory (input)", Trajectory),
    ("Verdict (output)", Verdict),
    ("DeadLetter", DeadLetter),
    ("Benchmark file (JSONL, one sample a line)", Sample),
    ("ReviewRequest", ReviewRequest),
    ("Label", Label),
    ("GuardRequest", GuardRequest),
    ("GuardDecision", GuardDecision),
])
def test_every_example_is_read_by_its_model(heading: str, model: type[BaseModel]) -> None:
    example = json.loads(examples()[heading])
    parsed = model.model_validate(example)
    dumped = json.loads(parsed.model_dump_json(exclude_unset=True))
    assert set(dumped) == set(example)  # every field read, nothing dropped or renamed
    assert model.model_validate(dumped) == parsed  # and written back as read


def test_the_readme_links_the_contract() -> None:
    assert "(docs/contract.md)" in (ROOT / "README.md").read_text()


def test_the_messages_page_shows_each_message_as_its_model_reads_it() -> None:
    """The messages page is where users learn the fields: its three examples must be
    messages the gateway reads or writes, every field of them, and its tables name every
    field the models have."""
    page = (ROOT / "docs" / "messages.md").read_text()
    section = page[page.index("## The messages"):page.index("## Topics, keys")]
    blocks = re.findall(r"```json\n(.*?)```", section, re.S)
    assert len(blocks) == 3
    models: tuple[type[BaseModel], ...] = (Trajectory, Verdict, DeadLetter)
    for block, model in zip(blocks, models, strict=True):
        example = json.loads(block)
        parsed = model.model_validate(example)
        assert set(json.loads(parsed.model_dump_json())) == set(example)
        for name in model.model_fields:
            assert f"`{name}`" in section, f"{model.__name__}.{name} is not explained"


def test_the_readmes_trajectory_is_one_the_gateway_reads() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## The messages in brief"):]
    example = json.loads(re.findall(r"```json\n(.*?)```", section, re.S)[0])
    assert set(json.loads(Trajectory.model_validate(example).model_dump_json())) == set(example)
