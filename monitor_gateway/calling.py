"""Call a monitor with a timeout and bounded retries; never let it take the gateway down.

Two kinds of failure are told apart. One that is about *this trajectory* (an unparseable
reply, a refused request, a bug) is retried ``MONITOR_RETRIES`` times, then becomes an
error verdict. One that says the *backend is unavailable* (refused connection, 5xx,
timeouts across calls) feeds the circuit breaker: once it opens, the call waits for the
backend to come back instead of spending its retries, and is judged late.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from .breaker import BackendOutage, CircuitBreaker
from .limits import Limiter
from .monitors.base import InlineMonitor, Judgement, Monitor, MonitorFailure, MonitorUnavailable
from .schema import Trajectory

log = logging.getLogger(__name__)
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    timeout: float = 30.0
    retries: int = 2
    backoff: float = 0.2
    max_backoff: float = 10.0

    def delay(self, attempt: int) -> float:
        """Exponential backoff with full jitter, so retries from many tasks spread out."""
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))


class Deadlines:
    """Cancels calls that outlive their deadline, from one periodic sweep.

    ``asyncio.timeout`` arms a timer per call; at ten thousand calls a second that was 12%
    of the gateway's CPU (benchmarks/throughput.py). Here a call costs a dict entry, and a
    deadline may be overshot by up to ``resolution`` seconds.
    """

    def __init__(self, resolution: float = 0.05) -> None:
        self.resolution = resolution
        self._deadlines: dict[asyncio.Task[object], float] = {}
        self._expired: set[asyncio.Task[object]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    @contextlib.contextmanager
    def limit(self, seconds: float) -> Iterator[None]:
        """Raise TimeoutError in the current task if the block takes over ``seconds``."""
        task = asyncio.current_task()
        assert task is not None, "Deadlines.limit needs a running task"
        self._deadlines[task] = time.monotonic() + seconds
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep())
        try:
            yield
        except asyncio.CancelledError:
            if task not in self._expired:
                raise
            task.uncancel()
            raise TimeoutError from None
        finally:
            self._deadlines.pop(task, None)
            expired = task in self._expired
            self._expired.discard(task)
        if expired:  # the call swallowed the cancellation and returned late
            task.uncancel()
            raise TimeoutError

    async def _sweep(self) -> None:
        """Runs while any call is being timed, then stops (so it never outlives its loop)."""
        try:
            while self._deadlines:
                await asyncio.sleep(self.resolution)
                now = time.monotonic()
                for task, deadline in list(self._deadlines.items()):
                    if now >= deadline and task not in self._expired:
                        self._expired.add(task)
                        task.cancel()
        finally:
            self._sweeper = None


def judge_inline(monitor: InlineMonitor, trajectory: Trajectory) -> Judgement | MonitorFailure:
    """An inline monitor's call: pure computation, so neither timed (it cannot be
    interrupted, and is bounded) nor retried (it would fail the same way again)."""
    try:
        return _checked(monitor.judge_now(trajectory))
    except Exception as exc:  # a monitor's failure is data, never a crash
        reason = _describe(exc)
    log.warning("inline monitor failed: %s", reason)
    return MonitorFailure(reason=f"{reason} (pure computation: not retried)", attempts=1)


def _checked(judgement: Judgement) -> Judgement:
    if not 0.0 <= judgement.score <= 1.0:
        raise ValueError(f"score {judgement.score!r} is outside [0, 1]")
    return judgement


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True, slots=True)
class Backend:
    """What stands between the gateway and an asynchronous monitor's backend: how many
    calls may be in flight, and whether it is answering at all."""

    limiter: Limiter
    breaker: CircuitBreaker


UNAVAILABLE = (MonitorUnavailable, ConnectionError, TimeoutError)


async def call_monitor(
    monitor: Monitor, trajectory: Trajectory, policy: RetryPolicy, deadlines: Deadlines,
    backend: Backend, slot: bool | None = None,
) -> tuple[Judgement | MonitorFailure, float]:
    """The judgement or the failure, and the seconds spent in the monitor's calls (retries
    included; waiting for a slot or for the backend to come back is not monitor time).
    ``slot``: a limiter slot the caller already holds (what ``acquire`` returned), used for
    the first attempt, or given back if the backend is out."""
    return await call_backend(partial(_judged, monitor, trajectory), policy, deadlines,
                              backend, slot)


async def _judged(monitor: Monitor, trajectory: Trajectory) -> Judgement:
    return _checked(await monitor.judge(trajectory))


async def call_backend(
    call: Callable[[], Awaitable[R]], policy: RetryPolicy, deadlines: Deadlines,
    backend: Backend, slot: bool | None = None,
) -> tuple[R | MonitorFailure, float]:
    """:func:`call_monitor` for any call to the monitor's backend (a pool's workers judging
    a record's bytes): the same limit, timeout, retries and breaker."""
    attempts, reason, spent = 0, "", [0.0]
    while True:
        if slot is not None and backend.breaker.state != "closed":
            backend.limiter.release(slot, None)  # no slot is held while an outage is waited
            slot = None
        try:  # closed, as nearly always: no coroutine to wait in
            probe = False if backend.breaker.state == "closed" else await backend.breaker.admit()
        except BackendOutage as exc:
            return MonitorFailure(f"{exc}; last error: {reason}", attempts=attempts), spent[0]
        held, slot = slot, None
        try:
            answer = await _attempt(call, policy, deadlines, backend.limiter, spent, held)
        except UNAVAILABLE as exc:
            reason = f"timed out after {policy.timeout:g}s" if isinstance(exc, TimeoutError) \
                else _describe(exc)
            if not backend.breaker.unavailable(probe, reason):
                continue  # the backend is out: wait for it, this call's retries are kept
        except Exception as exc:  # a monitor's failure is data, never a crash
            backend.breaker.answered()
            reason = _describe(exc)
        except asyncio.CancelledError:
            backend.breaker.abandoned(probe)
            raise
        else:
            backend.breaker.answered()
            return answer, spent[0]
        attempts += 1
        log.warning("monitor attempt %d failed: %s", attempts, reason)
        if attempts > policy.retries:
            return MonitorFailure(reason=f"{reason} (after {attempts} attempts)",
                                  attempts=attempts), spent[0]
        await asyncio.sleep(policy.delay(attempts - 1))


async def _attempt(call: Callable[[], Awaitable[R]], policy: RetryPolicy,
                   deadlines: Deadlines, limiter: Limiter, spent: list[float],
                   held: bool | None) -> R:
    """One call within the concurrency limit (in the slot ``held``, if one is), its latency
    given back to the limit (a timeout as the full timeout: the backend is slower than we
    allow) and added to ``spent``."""
    measuring = held if held is not None else await limiter.acquire()  # min-latency probe?
    started = time.perf_counter()
    rtt: float | None = None
    try:
        with deadlines.limit(policy.timeout):
            answer = await call()
        rtt = time.perf_counter() - started
        return answer
    except TimeoutError:
        rtt = policy.timeout
        raise
    finally:
        spent[0] += time.perf_counter() - started
        limiter.release(measuring, rtt)
