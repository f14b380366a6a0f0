"""Step-wise judging's cost (issue 36): a step costs the same however long its run.

The offline monitor's ``judge_step`` on the last step of runs of 10, 100 and 1,000 steps
(a realistic agent run's steps repeated, then the realistic agent runs' costliest step),
beside judging the same runs whole
(``judge_now``), the baseline whose cost grows with the run. Each figure is the median of
``--rounds`` timings; the ratios to the 10-step run are what to read: judging a step
should stay near 1, judging the whole run grows about as its length. Also the median
time of a step over every step of the realistic test split's agent runs.

    python benchmarks/steps.py [--rounds 101]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

from monitor_gateway.monitors.offline import from_settings
from monitor_gateway.schema import Trajectory
from monitor_gateway.settings import GatewaySettings
from replay.sources import resolve

LENGTHS = (10, 100, 1000)


def timed(call: Callable[[], object], rounds: int) -> float:
    """The median seconds of ``rounds`` calls."""
    spent = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        spent.append(time.perf_counter() - started)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=101)
    rounds = parser.parse_args().rounds
    monitor = from_settings(GatewaySettings())
    runs = [Trajectory.model_validate(s.trajectory())
            for s in resolve("realistic", "test") if s.steps]
    every = [timed(partial(monitor.judge_step, t.request, t.steps, i), 3)
             for t in runs for i in range(len(t.steps))]
    print(f"every step of {len(runs)} realistic agent runs ({len(every)} steps): median "
          f"{statistics.median(every) * 1000:.3f} ms, p99 "
          f"{sorted(every)[int(len(every) * 0.99)] * 1000:.3f} ms")
    base = max(runs, key=lambda t: len(t.steps))
    # the last step judged: the agent's step of the realistic runs that takes longest
    costly = max(((t, i) for t in runs for i in range(len(t.steps))),
                 key=lambda ti: timed(partial(monitor.judge_step, ti[0].request, ti[0].steps,
                                              ti[1]), 3))
    last = costly[0].steps[costly[1]]
    print(f"runs of n steps: {base.id}'s {len(base.steps)} steps repeated, then the "
          f"costliest step ({costly[0].id}'s step {costly[1]}, judged last)")
    print(f"{'steps':>6} {'judge_step ms':>14} {'ratio':>6} {'whole run ms':>13} {'ratio':>6}")
    first: tuple[float, float] | None = None
    for length in LENGTHS:
        steps = [base.steps[i % len(base.steps)] for i in range(length - 1)] + [last]
        run = base.model_copy(update={"steps": steps})
        step = timed(partial(monitor.judge_step, run.request, run.steps, length - 1), rounds)
        whole = timed(partial(monitor.judge_now, run), max(3, rounds // 7))
        first = first or (step, whole)
        print(f"{length:>6} {step * 1000:>14.3f} {step / first[0]:>6.2f} "
              f"{whole * 1000:>13.1f} {whole / first[1]:>6.1f}")


if __name__ == "__main__":
    main()
