"""A circuit breaker for the monitor backend: an outage is waited out, not passed through.

Closed, calls flow. After ``threshold`` consecutive calls fail in a way that says the backend
is unavailable (refused connection, 5xx, timeout), it opens: callers wait instead of spending
their retries in a second against a dead server, and the gateway pauses fetching. After a
cool-down (growing to ``max_cooldown``) one waiting call goes through as a probe (half-open);
if the backend answers, it closes and everyone proceeds; if not, it opens again.

An outage longer than ``budget`` seconds, or any outage under ``OUTAGE_POLICY=fail``, ends
waiting: callers get :class:`BackendOutage` and the fail policy decides their verdicts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Literal

State = Literal["closed", "open", "half_open"]
log = logging.getLogger(__name__)


class BackendOutage(Exception):
    """The backend has been unavailable too long to wait for (or waiting is off)."""


class CircuitBreaker:
    def __init__(self, *, threshold: int = 5, budget: float = 600.0, wait: bool = True,
                 cooldown: float = 0.5, max_cooldown: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.threshold = threshold
        self.budget = budget
        self.wait = wait
        self._cooldown = self._first_cooldown = cooldown
        self.max_cooldown = max_cooldown
        self._clock = clock
        self.state: State = "closed"
        self.outage_since: float | None = None
        self._consecutive = 0
        self._failed = 0  # calls that failed during the current outage
        self._reopen_at = 0.0
        self._changed = asyncio.Event()

    def holding(self) -> bool:
        """Open and waiting it out: the gateway stops fetching new work meanwhile."""
        return self.state != "closed" and self.wait and not self._over_budget()

    def outage_seconds(self) -> float:
        return 0.0 if self.outage_since is None else self._clock() - self.outage_since

    async def admit(self) -> bool:
        """Wait until a call may go to the backend; True if it goes as the half-open probe.
        Raises :class:`BackendOutage` when the outage is not to be waited for."""
        while True:
            if self.state == "closed":
                return False
            if not self.wait or self._over_budget():
                raise BackendOutage(self._describe())
            now = self._clock()
            if self.state == "open" and now >= self._reopen_at:
                self.state = "half_open"
                return True
            assert self.outage_since is not None  # open or half-open: an outage is on
            wake = self._reopen_at if self.state == "open" else now + self.max_cooldown
            wake = min(wake, self.outage_since + self.budget)
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=max(0.0, wake - now))

    def answered(self) -> None:
        """The backend answered (a judgement, or an error about this trajectory)."""
        self._consecutive = 0
        if self.state != "closed":
            log.warning("monitor backend answering again after %.1fs (%d failed calls)",
                        self.outage_seconds(), self._failed)
            self.state = "closed"
            self.outage_since = None
            self._cooldown = self._first_cooldown
            self._changed.set()

    def unavailable(self, probe: bool, reason: str) -> bool:
        """The backend did not answer. True when the failure counts against the call's own
        retries: the breaker was closed and this failure did not open it."""
        self._failed += 1
        if self.state == "closed":
            self._consecutive += 1
            if self._consecutive < self.threshold:
                return True
            self.outage_since = self._clock()
            self._failed = self._consecutive
            log.warning("monitor backend unavailable (%d calls in a row failed, last: %s); %s",
                        self._consecutive, reason,
                        f"waiting up to {self.budget:g}s for it, fetching paused" if self.wait
                        else "failing fast (OUTAGE_POLICY=fail)")
            self._open()
            return False
        if probe:
            self._cooldown = min(self.max_cooldown, self._cooldown * 2)
            self._open()
        return False

    def abandoned(self, probe: bool) -> None:
        """A probe that was cancelled before it said anything: let the next waiter probe."""
        if probe and self.state == "half_open":
            self.state = "open"
            self._reopen_at = self._clock()
            self._changed.set()

    def _open(self) -> None:
        self.state = "open"
        self._reopen_at = self._clock() + self._cooldown
        self._changed.set()

    def _over_budget(self) -> bool:
        return self.outage_since is not None and self.outage_seconds() > self.budget

    def _describe(self) -> str:
        if not self.wait:
            return "monitor backend unavailable (circuit open, OUTAGE_POLICY=fail)"
        return (f"monitor backend unavailable for {self.outage_seconds():.0f}s, over the "
                f"outage budget of {self.budget:g}s")
