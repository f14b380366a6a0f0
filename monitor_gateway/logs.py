"""Logs that stay readable in an outage.

During a broker outage every in-flight publish, every commit and the Kafka client itself
report the same failure, dozens of times a second. :class:`RepeatFilter` lets the first line
of a kind through and counts the rest for ``interval`` seconds; :class:`Outage` turns a
run of failures into one line when it starts, a reminder now and then while it lasts, and
one when it ends; :class:`ConnectionFailures` holds back the Kafka client's own lines that
a connection failed (one every retry, for as long as the broker is down), counting them
into the broker's outage instead; :class:`BrokerOutage` puts the two together for a
service whose Kafka clients share a broker (the gateway, the guard).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from aiokafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    NodeNotReadyError,
    RequestTimedOutError,
)


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
    """One WARNING line when ``what`` starts failing, one when it works again (at
    ``recovered``), with the count; with ``remind``, a WARNING reminder at most every
    ``remind`` seconds while it lasts, saying for how long. Lines of others held back in
    its name (:meth:`held_back`) are counted in its reminders and its last line; those
    held back while it works (a blip it never saw fail) are not reported by it."""

    def __init__(self, what: str, logger: logging.Logger,
                 clock: Callable[[], float] = time.monotonic, remind: float | None = None,
                 recovered: int = logging.WARNING) -> None:
        self.what = what
        self._log = logger
        self._clock = clock
        self._remind = remind
        self._recovered = recovered
        self.since: float | None = None
        self._said = 0.0  # when its last line was logged
        self.failures = 0
        self.held = 0

    def failed(self, reason: object) -> None:
        now = self._clock()
        if self.since is None:
            self.since = self._said = now
            self.failures = 0
            self._log.warning("%s failing (%s); retrying", self.what, reason)
        elif self._remind is not None and now - self._said >= self._remind:
            self._said = now
            self._log.warning("%s still failing after %.0fs (%d failed attempts%s; %s); "
                              "retrying", self.what, now - self.since, self.failures,
                              self._held, reason)
        self.failures += 1

    def held_back(self) -> None:
        """A line of someone else's about this failure was held back: counted instead."""
        self.held += 1

    def succeeded(self) -> None:
        if self.since is not None:
            self._log.log(self._recovered, "%s working again after %.1fs (%d failed attempts%s)",
                          self.what, self._clock() - self.since, self.failures, self._held)
            self.since = None
        self.held = 0

    @property
    def _held(self) -> str:
        return f", {self.held} client error lines held back" if self.held else ""


# what the Kafka client raises, and logs, when the broker cannot be reached
UNREACHABLE = (KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError,
               RequestTimedOutError, OSError, TimeoutError)
# the Kafka client's lines that say so whatever their arguments are
UNREACHABLE_LINES = frozenset({
    'Unable connect to "%s:%s": %s',
    "Unable connect to node with id %s: %s",
    "Unable to update metadata from %s",
    "Marking the coordinator dead (node %s)for group %s.",
})


def unreachable(record: logging.LogRecord) -> bool:
    """A Kafka client (aiokafka) line that says a connection to the broker failed: one
    of :data:`UNREACHABLE_LINES`, or any line whose arguments include such an error."""
    if record.name.split(".")[0] != "aiokafka":
        return False
    if str(record.msg) in UNREACHABLE_LINES:
        return True
    args = record.args if isinstance(record.args, tuple) else ()
    return any(isinstance(arg, UNREACHABLE) for arg in args)


class ConnectionFailures(logging.Filter):
    """Holds back the Kafka client's lines that say a connection to the broker failed
    (aiokafka logs one every retry, every ~2 s a client, for as long as the broker is
    down), calling ``held_back`` for each instead; every other line passes. With several
    gateways in one process (tests), the first one installed counts each such line."""

    def __init__(self, held_back: Callable[[], None]) -> None:
        super().__init__()
        self._held_back = held_back

    def filter(self, record: logging.LogRecord) -> bool:
        if unreachable(record):
            self._held_back()
            return False
        return True

    def install(self) -> None:
        """On every aiokafka logger: a logger's filters see only the lines logged on it
        (not those its children pass up), and aiokafka logs on one a module."""
        for logger in kafka_loggers():
            logger.addFilter(self)

    def remove(self) -> None:
        for logger in kafka_loggers():
            logger.removeFilter(self)


def kafka_loggers() -> list[logging.Logger]:
    """The aiokafka loggers: importing aiokafka (as this module does) imports its client
    modules, each of which makes its logger then."""
    return [logger for name, logger in logging.root.manager.loggerDict.items()
            if isinstance(logger, logging.Logger) and name.split(".")[0] == "aiokafka"]


class BrokerOutage:
    """A Kafka broker's outage in a service's log: the broker is checked every ``every``
    seconds (``ping``: whether it answered within the timeout it is given); one WARNING
    line when it stops answering, naming the bootstrap servers, a reminder every
    ``remind`` seconds while it does not, and one INFO line when it answers again, with
    how long it was gone. Meanwhile the Kafka client's own lines of each failed attempt
    are held back (:class:`ConnectionFailures`, once :meth:`install` ed) and counted in
    these. ``held`` is called for each line held back, ``checked`` with each check's
    result (the service's metrics)."""

    def __init__(self, bootstrap: str, logger: logging.Logger, remind: float,
                 held: Callable[[], None] = lambda: None,
                 checked: Callable[[bool], None] = lambda _: None) -> None:
        self.outage = Outage(f"Kafka broker connection (bootstrap {bootstrap})", logger,
                             remind=remind, recovered=logging.INFO)
        self._held = held
        self._checked = checked
        self._quiet = ConnectionFailures(self._held_back)

    def _held_back(self) -> None:
        self.outage.held_back()
        self._held()

    def install(self) -> None:
        self._quiet.install()

    def remove(self) -> None:
        self._quiet.remove()

    async def watch(self, ping: Callable[[float], Awaitable[bool]], every: float = 2.0
                    ) -> None:
        """Check the broker every ``every`` seconds, for ever."""
        while True:
            await asyncio.sleep(every)
            answered = await ping(1.0)
            if answered:
                self.outage.succeeded()
            else:
                self.outage.failed("unreachable: no answer to a metadata request in 1 s")
            self._checked(answered)
