"""How many monitor calls may be in flight: a limit that follows the backend's knee.

A fixed ``CONCURRENCY`` under-uses a fast server or overloads a slow one, and a queue at an
overloaded server turns into timeouts and retries that add to its load. The controller is
Envoy's adaptive-concurrency gradient controller, counted in calls instead of wall-clock
windows (an LLM call may take a minute):

- the backend's latency under little load (``min_rtt``) is measured with the limit pinned
  to a few calls, at start and again every ``probe_interval`` seconds, and lowered whenever
  a window is quicker;
- after every window of about one limit's worth of calls,
  ``gradient = clamp((min_rtt * (1 + buffer) + slack) / window_rtt, 0.5, 2)`` and
  ``limit = clamp(limit * gradient + sqrt(limit), 1, ceiling)``.

Latencies are compared as medians: an LLM's latency varies with each trajectory's length,
and one slow or timed-out call must not throttle the rest. While latency stays near
``min_rtt`` the limit grows to the ceiling fast (``growth`` times a window, as TCP's slow
start does, from the first ``min_rtt`` measurement on, until latency first rises beyond
the gradient's tolerance): against a flat 200 ms server, 4 calls, then the ceiling of 64,
one round trip after the probe. Growing 16 times a window rather than 4 (4, 16, 64), a
7-second burst got 0.86-0.93 of Little's limit (0.90 or more in four rounds of five)
against 0.86-0.92 (one of five), the fixed limit 0.90-0.94 beside them
(benchmarks/llm_throughput.py; docs/benchmark-log.md, runs 39 and 44); against a server
with a knee the first window overshoots further. Once calls queue at the backend
and latency rises, it shrinks back towards the point where they started to queue (at most
halving the limit a window). The pinned probe is a few calls wide, not one, so that a single
hanging call cannot stall the gateway. The ``slack`` (5 ms) keeps the event loop's own
scheduling, which grows with the calls in flight, from reading as a queue at a backend
that answers in microseconds.
:class:`GradientLimit` is the pure arithmetic; :class:`Limiter` is the asyncio gate.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from collections import deque
from collections.abc import Callable


class GradientLimit:
    """The limit's arithmetic: feed it call latencies, read ``allowed``. No clock of its own:
    callers pass ``now``, so tests drive it with known numbers."""

    def __init__(self, ceiling: int, *, buffer: float = 0.25, slack: float = 0.005,
                 probe_width: int = 4, probe_samples: int = 4, probe_interval: float = 60.0,
                 min_window: int = 8, growth: float = 16.0) -> None:
        self.ceiling = ceiling
        self.slack = slack
        self.probe_width = min(ceiling, probe_width)
        self.buffer = buffer
        self.probe_samples = probe_samples
        self.probe_interval = probe_interval
        self.min_window = min_window
        self.growth = growth
        self.limit = float(self.probe_width)
        self.min_rtt: float | None = None
        self.probing = True
        self.slow_start = True
        self._probe: list[float] = []
        self._window: list[float] = []
        self._next_probe = 0.0

    @property
    def allowed(self) -> int:
        """Calls that may be in flight now: ``probe_width`` while measuring ``min_rtt``."""
        return self.probe_width if self.probing else min(self.ceiling, max(1, int(self.limit)))

    def sample(self, rtt: float, now: float, *, probe: bool) -> bool:
        """One finished call. ``probe`` says it was admitted while ``min_rtt`` was being
        measured; latencies of calls admitted before (under load) do not count towards it.
        True when the limit may have changed."""
        if self.probing:
            if probe:
                self._probe.append(rtt)
                if len(self._probe) >= self.probe_samples:
                    self._measured(statistics.median(self._probe), now)
                    return True
            return False
        self._window.append(rtt)
        if len(self._window) < max(self.min_window, self.allowed):
            return False
        window_rtt = statistics.median(self._window)
        self._window.clear()
        assert self.min_rtt is not None
        self.min_rtt = min(self.min_rtt, window_rtt)
        tolerated = self.min_rtt * (1 + self.buffer) + self.slack
        gradient = min(2.0, max(0.5, tolerated / window_rtt))
        self.slow_start = self.slow_start and gradient >= 1.0
        grown = self.growth * self.limit if self.slow_start else (self.limit * gradient
                                                                  + math.sqrt(self.limit))
        self.limit = min(float(self.ceiling), max(1.0, grown))
        if now >= self._next_probe:
            self.probing = True
        return True

    def _measured(self, min_rtt: float, now: float) -> None:
        if self.min_rtt is None:  # the first probe was slow start's first window
            self.limit = min(float(self.ceiling), self.growth * self.limit)
        self.min_rtt = min_rtt
        self.probing = False
        self._probe.clear()
        self._window.clear()
        # a slow backend is measured less often: at most a fiftieth of the time at one call
        self._next_probe = now + max(self.probe_interval, 50 * min_rtt)


class Limiter:
    """An asyncio gate for monitor calls: at most ``allowed`` in flight, the rest wait in
    arrival order. ``acquire`` says whether the call is a ``min_rtt`` probe; ``release``
    gives back the slot with the call's latency (None when it says nothing of load, e.g. a
    refused connection)."""

    def __init__(self, ceiling: int, *, adaptive: bool,
                 on_change: Callable[[int], None] | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        self.ceiling = ceiling
        self.control = GradientLimit(ceiling) if adaptive else None
        self._clock = clock or time.monotonic
        self._on_change = on_change
        self._in_flight = 0
        self._waiters: deque[asyncio.Future[bool]] = deque()
        self._reported = -1
        self._report()

    @property
    def allowed(self) -> int:
        return self.control.allowed if self.control is not None else self.ceiling

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def try_acquire(self) -> bool | None:
        """A slot now if one is free (what ``acquire`` would return), else None: the hot
        path's way round a coroutine."""
        if self._in_flight < self.allowed and not self._waiters:
            self._in_flight += 1
            return self._probing()
        return None

    async def acquire(self) -> bool:
        if (slot := self.try_acquire()) is not None:
            return slot
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # a slot was handed over: give it on
                self.release(waiter.result(), None)
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def release(self, probe: bool, rtt: float | None) -> None:
        self._in_flight -= 1
        if (rtt is not None and self.control is not None
                and self.control.sample(rtt, self._clock(), probe=probe)):
            self._report()
        while self._waiters and self._in_flight < self.allowed:
            waiter = self._waiters.popleft()
            if not waiter.done():  # one cancelled while waiting is skipped
                self._in_flight += 1
                waiter.set_result(self._probing())

    def _probing(self) -> bool:
        return self.control is not None and self.control.probing

    def _report(self) -> None:
        if self._on_change is not None and self.allowed != self._reported:
            self._reported = self.allowed
            self._on_change(self._reported)
