"""Logs that stay readable in an outage.

During a broker outage every in-flight publish, every commit and the Kafka client itself
report the same failure, dozens of times a second. :class:`RepeatFilter` lets the first line
of a kind through and counts the rest for ``interval`` seconds; :class:`Outage` turns a
run of failures into one line when it starts and one when it ends.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class RepeatFilter(logging.Filter):
    """At most one WARNING-or-worse line a logger and message template every ``interval``
    seconds; the next one that passes says how many were held back."""

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        super().__init__()
        self.interval = interval
        self._clock = clock
        self._seen: dict[tuple[str, int, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, record.levelno, str(record.msg))
        now = self._clock()
        last, held = self._seen.get(key, (float("-inf"), 0))
        if now - last < self.interval:
            self._seen[key] = (last, held + 1)
            return False
        self._seen[key] = (now, 0)
        if held:
            record.msg = f"{record.msg} [{held} more like this in the last {now - last:.0f}s]"
        return True


def install_repeat_filter(interval: float = 10.0) -> None:
    """Put the filter on every handler of the root logger (where all Kafka client,
    FastStream and gateway lines end up)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RepeatFilter) for f in handler.filters):
            handler.addFilter(RepeatFilter(interval))


class Outage:
    """One line when ``what`` starts failing, one when it works again, with the count."""

    def __init__(self, what: str, logger: logging.Logger,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self._log = logger
        self._clock = clock
        self.since: float | None = None
        self.failures = 0

    def failed(self, reason: object) -> None:
        if self.since is None:
            self.since = self._clock()
            self.failures = 0
            self._log.warning("%s failing (%s); retrying", self.what, reason)
        self.failures += 1

    def succeeded(self) -> None:
        if self.since is not None:
            self._log.warning("%s working again after %.1fs (%d failed attempts)", self.what,
                              self._clock() - self.since, self.failures)
            self.since = None
