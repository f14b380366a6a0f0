"""Monitors for tests: flaky, hanging, slow. Also loadable as plugins, e.g.
``MONITOR_GATEWAY_MONITOR=monitors:slow`` with ``tests/`` on PYTHONPATH."""

from __future__ import annotations

import asyncio
import os
import time
import zlib

from monitor_gateway.monitors import Judgement
from monitor_gateway.schema import MonitorCard, Trajectory
from monitor_gateway.settings import GatewaySettings


def card(name: str) -> MonitorCard:
    return MonitorCard(name=name, backend="test", version="1", label=f"test monitor {name}")


class Scripted:
    """Fails, hangs or sleeps according to words in the trajectory's request."""

    def __init__(self, delay: float = 0.0) -> None:
        self.card = card("scripted")
        self.delay = delay
        self.calls: dict[str, int] = {}

    async def judge(self, trajectory: Trajectory) -> Judgement:
        self.calls[trajectory.id] = self.calls.get(trajectory.id, 0) + 1
        if "HANG" in trajectory.request:
            await asyncio.sleep(3600)
        if "FAIL" in trajectory.request:
            raise RuntimeError("backend unavailable")
        await asyncio.sleep(self.delay)
        return Judgement(score=0.9 if "BAD" in trajectory.request else 0.1)


def slow(settings: GatewaySettings) -> Scripted:
    """Plugin factory: sleeps MONITOR_DELAY seconds (default 5 ms) a trajectory."""
    return Scripted(delay=float(os.environ.get("MONITOR_DELAY", "0.005")))


class Hashed:
    """Flags one trajectory in three, chosen by a hash of its id: a monitor with known,
    non-zero miss and false-alarm rates on any benchmark."""

    card = card("hashed")

    async def judge(self, trajectory: Trajectory) -> Judgement:
        flagged = zlib.crc32(trajectory.id.encode()) % 3 == 0
        return Judgement(score=0.9 if flagged else 0.1)


class Crashing:
    """Inline (pure computation), but kills its process on a request containing CRASH: a
    worker lost to a segfault or the OOM killer; and never returns on one containing HANG."""

    card = card("crashing")

    def judge_now(self, trajectory: Trajectory) -> Judgement:
        if "CRASH" in trajectory.request:
            os._exit(1)
        if "HANG" in trajectory.request:
            time.sleep(3600)
        return Judgement(score=0.9 if "BAD" in trajectory.request else 0.1,
                         rationale=f"judged in process {os.getpid()} at niceness {os.nice(0)}")

    async def judge(self, trajectory: Trajectory) -> Judgement:
        return self.judge_now(trajectory)


def crashing(settings: GatewaySettings) -> Crashing:
    """Plugin factory for :class:`Crashing`."""
    return Crashing()
