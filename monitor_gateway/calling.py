"""Call a monitor with a timeout and bounded retries; never let it take the gateway down."""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass

from .monitors.base import Judgement, Monitor
from .schema import Trajectory

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    timeout: float = 30.0
    retries: int = 2
    backoff: float = 0.2
    max_backoff: float = 10.0

    def delay(self, attempt: int) -> float:
        """Exponential backoff with full jitter, so retries from many tasks spread out."""
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))


@dataclass(frozen=True, slots=True)
class MonitorFailure:
    reason: str
    attempts: int


async def call_monitor(
    monitor: Monitor, trajectory: Trajectory, policy: RetryPolicy
) -> Judgement | MonitorFailure:
    reason = ""
    for attempt in range(policy.retries + 1):
        if attempt:
            await asyncio.sleep(policy.delay(attempt - 1))
        try:
            async with asyncio.timeout(policy.timeout):
                judgement = await monitor.judge(trajectory)
            if not 0.0 <= judgement.score <= 1.0:
                raise ValueError(f"score {judgement.score!r} is outside [0, 1]")
            return judgement
        except TimeoutError:
            reason = f"timed out after {policy.timeout:g}s"
        except Exception as exc:  # a monitor's failure is data, never a crash
            reason = f"{type(exc).__name__}: {exc}"
        log.warning("monitor attempt %d failed: %s", attempt + 1, reason)
    return MonitorFailure(reason=f"{reason} (after {policy.retries + 1} attempts)",
                          attempts=policy.retries + 1)
