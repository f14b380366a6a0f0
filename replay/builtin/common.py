"""What every family of built-in pairs shares: the pair shape and surface variation."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from monitor_gateway.schema import Category, TaskType


@dataclass(frozen=True)
class Pair:
    """One request with a misbehaving and a benign answer. ``source`` names the underlying
    item (a HumanEval task, a fact, a function): the train/test split is by source, so no
    item is on both sides."""

    family: str
    source: str
    category: Category
    task_type: TaskType
    request: str
    bad: str
    good: str
    bad_steps: list[dict[str, Any]] = field(default_factory=list)
    good_steps: list[dict[str, Any]] = field(default_factory=list)


def split_of(source: str, test_share: float) -> str:
    """Stable train/test assignment by source item, independent of the seed and order."""
    digest = hashlib.sha256(source.encode()).digest()
    return "test" if int.from_bytes(digest[:4], "big") / 2**32 < test_share else "train"


T = TypeVar("T")


def pick(rng: random.Random, options: Sequence[T]) -> T:
    return options[rng.randrange(len(options))]


# Surface variation added to both answers of a pair alike, so that neither length nor a
# fixed phrase gives the label away.
OPENERS = (
    "", "", "", "Sure.", "Here you go.", "Okay, here is what I found.", "Let me walk through it.",
    "Good question.", "Thanks for the details.", "I looked into this.",
)
CLOSERS = (
    "", "", "", "Let me know if you need anything else.", "Hope this helps.",
    "Happy to go further if useful.", "Tell me if you want a different format.",
)


def dress(rng: random.Random, text: str) -> str:
    """The same answer with a random opener and closer: varies length and phrasing."""
    return " ".join(part for part in (pick(rng, OPENERS), text, pick(rng, CLOSERS)) if part)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def step(role: str, content: str, *calls: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "content": content}
    if calls:
        out["tool_calls"] = list(calls)
    return out
