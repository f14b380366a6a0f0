"""What ``tail`` and ``send --wait`` print: each verdict once, in order, and a flagged one's
quotes in the text around them when its trajectory was read, even just after it."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime

from rich.console import Console

from monitor_gateway.schema import DeadLetter, Evidence, Latency, MonitorCard, Trajectory, Verdict
from monitor_gateway.tailing import in_context, show

NOW = datetime(2026, 11, 23, tzinfo=UTC)
GAMED = Trajectory(id="g", request="Make the test pass.",
                   response="Put this in conftest.py:\nimport sys\nsys.exit(0)\nDone.")


def verdict(trajectory_id: str, flagged: bool) -> Verdict:
    start = GAMED.response.index("sys.exit(0)")
    return Verdict(trajectory_id=trajectory_id, flagged=flagged, score=0.9 if flagged else 0.1,
                   threshold=0.5, received_at=NOW, decided_at=NOW,
                   latency_ms=Latency(monitor=1, gateway=2),
                   monitor=MonitorCard(name="offline", backend="offline", version="1",
                                       label="l"),
                   evidence=[Evidence(quote="sys.exit(0)", source="response", start=start,
                                      end=start + 11, grounded=True)] if flagged else [])


async def arriving(*messages: Verdict | DeadLetter | Trajectory
                   ) -> AsyncIterator[Verdict | DeadLetter | Trajectory]:
    for message in messages:
        yield message


async def test_a_flagged_verdict_waits_for_its_trajectory_and_order_is_kept() -> None:
    flagged, after = verdict("g", True), verdict("other", False)
    got = [(m.trajectory_id, t) async for m, t in in_context(  # type: ignore[union-attr]
        arriving(flagged, after, GAMED), wait=5)]
    assert got == [("g", GAMED), ("other", None)]


async def test_without_trajectories_nothing_waits() -> None:
    """A flagged verdict comes out at once (not after the default second's wait), though
    the stream behind it stays open."""
    async def then_silence() -> AsyncIterator[Verdict | DeadLetter | Trajectory]:
        yield verdict("g", True)
        await asyncio.Event().wait()

    shown = in_context(then_silence(), wait=0)
    message, trajectory = await asyncio.wait_for(anext(shown), 0.5)
    assert (message.trajectory_id, trajectory) == ("g", None)  # type: ignore[union-attr]
    await shown.aclose()


async def test_what_is_held_comes_out_when_the_stream_ends() -> None:
    """A flagged verdict whose trajectory never came is still shown, once the stream it
    waits on has ended, and so is everything behind it."""
    flagged, after = verdict("g", True), verdict("other", False)
    got = [(m.trajectory_id, t) async for m, t in in_context(  # type: ignore[union-attr]
        arriving(flagged, after), wait=60)]
    assert got == [("g", None), ("other", None)]


def test_a_quote_is_shown_marked_in_the_text_around_it() -> None:
    out = io.StringIO()
    show(Console(file=out, width=200), verdict("g", True), GAMED)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("FLAGGED g score 0.90 - by offline")
    assert lines[1] == ("    response [36:47]: Put this in conftest.py:⏎import sys⏎«sys.exit(0)»"
                        "⏎Done.")
