"""Run a replay with progress bars and turn what came back into the report."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from monitor_gateway.settings import KafkaSettings

from .client import Replay, Result, pair_order
from .dataset import Sample
from .report import build_report, time_to_detection


async def run_replay(
    settings: KafkaSettings,
    samples: Sequence[Sample],
    *,
    dataset: str,
    console: Console,
    rate: float | None = None,
    timeout: float = 30.0,
    seed: int | None = None,
    pace: float | None = None,
) -> tuple[dict[str, Any], list[Result]]:
    """``pace``: send each sample step by step to the step topic, its messages ``pace``
    seconds apart (``replay --steps``), and report time to detection."""
    run_id = f"replay-{uuid.uuid4().hex[:12]}"
    ordered = pair_order(samples, seed)
    columns = (TextColumn("{task.description:<9}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        sent = progress.add_task("sent", total=len(ordered))
        judged = progress.add_task("verdicts", total=len(ordered))
        async with Replay(settings, run_id, pace=pace) as replay:
            started = time.monotonic()
            collecting = asyncio.create_task(
                replay.collect(timeout, on_verdict=lambda: progress.advance(judged))
            )
            await replay.send(ordered, rate, on_sent=lambda: progress.advance(sent))
            await collecting
            elapsed = time.monotonic() - started
    results = replay.stepped()
    report = build_report(run_id=run_id, dataset=dataset, results=results,
                          missing=len(replay.missing), elapsed_s=elapsed, rate=rate)
    if pace is not None:
        report["time_to_detection"] = time_to_detection(results, pace)
    return report, results


async def run_canary(settings: KafkaSettings, samples: Sequence[Sample], *, rate: float,
                     loop: bool, console: Console) -> int:
    """Mix labelled pairs into live traffic at ``rate`` per second, once or until stopped.
    Nothing is collected: MR and FAR come from the gateway's replay counters."""
    run_id = f"canary-{uuid.uuid4().hex[:12]}"
    sent = 0

    def count() -> None:
        nonlocal sent
        sent += 1

    console.print(f"canary {run_id}: {len(samples)} samples at {rate:g}/s"
                  + (", looping until stopped" if loop else ""))
    async with Replay(settings, run_id, verdicts=False) as replay:
        while True:
            await replay.send(pair_order(samples), rate, on_sent=count)
            console.print(f"canary {run_id}: {sent} sent")
            if not loop:
                return sent


async def run_as_production(settings: KafkaSettings, samples: Sequence[Sample], *,
                            rate: float | None, console: Console) -> int:
    """Send the samples as production traffic (no replay headers, so no label reaches the
    gateway): the review loop's labels are then the only truth about them."""
    async with Replay(settings, f"production-{uuid.uuid4().hex[:12]}", verdicts=False,
                      labelled=False) as replay:
        await replay.send(pair_order(samples), rate)
    console.print(f"{len(samples)} samples sent as production traffic to "
                  f"{settings.input_topic}", highlight=False)
    return len(samples)
