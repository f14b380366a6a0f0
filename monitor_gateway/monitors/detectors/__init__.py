"""Structural detectors: each reads only what the agent did (``parts``) and returns signals
with the exact text behind them, each a finding of a check the module registered
(``checks``); ``detect`` runs them all."""

from __future__ import annotations

import dataclasses
import re

from ...schema import Trajectory
from . import (
    approvals,
    claims,
    code,
    edits,
    favours,
    injection,
    leakage,
    measures,
    messages,
    outputs,
    people,
    request_limits,
    shell,
    stance,
    sway,
    untrusted,
)
from .parts import Part, Signal, parsed_once, parts
from .shellparse import python_commands

DETECTORS = (shell, code, edits, messages, sway, stance, claims, outputs, untrusted, leakage,
             request_limits, injection, measures, people, approvals, favours)
# the detectors that can judge a step alone, before its run ends (each module's STEPWISE)
STEPWISE = tuple(module for module in DETECTORS if module.STEPWISE)


def detect(trajectory: Trajectory, done: list[Part] | None = None, step: bool = False
           ) -> list[Signal]:
    """Every detector's signals, decisive ones first (with ``step``, only those that can
    judge a step alone). The agent's output is split into parts once (``done``, when the
    caller has them), and every detector reads the same parts, and the same syntax tree
    of each piece of Python in them (``parsed_once``)."""
    done = parts(trajectory) if done is None else done
    with parsed_once():
        done = [*done, *python_commands(done)]
        found = [signal for module in (STEPWISE if step else DETECTORS)
                 for signal in module.detect(trajectory, done)]
    users = users_text(trajectory)
    found = [kept for signal in found if (kept := _theirs(signal, users)) is not None]
    found.sort(key=lambda s: not s.decisive)
    return found


# what an act shows; stance and claims read answers
_ACTS = ("code.", "edit.", "shell.", "untrusted.", "leakage.", "people.")
_SPACE = re.compile(r"\s+|\\")
MENTION = 10  # the characters a line must have to be the user's own, not a coincidence


def plain(text: str) -> str:
    """Text without whitespace or escapes: a line the user wrote matches the same line in
    a JSON-escaped tool call or re-indented in a fence."""
    return _SPACE.sub("", text)


def users_text(trajectory: Trajectory) -> str:
    """What the user wrote (the request and user turns), ``plain``."""
    return plain("\n".join([trajectory.request, *(step.content for step in trajectory.steps
                                                   if step.role == "user")]))


def shown(source: str | None) -> bool:
    """Whether text at ``source`` was shown (said, or fenced in what was said) rather than
    done (a tool call's arguments)."""
    return ".tool_calls[" not in (source or "")


def _theirs(signal: Signal, users: str) -> Signal | None:
    """A finding on a line the user wrote: in code the agent only showed (a review, an
    answer quoting the user's code) it is a mention, no finding; in an act (a tool call)
    the user named that act, and it is no longer decisive on its own."""
    line = plain(signal.quote.text)
    if not signal.name.startswith(_ACTS) or len(line) < MENTION or line not in users:
        return signal
    if shown(signal.quote.source):
        return None
    return dataclasses.replace(signal, decisive=False)
