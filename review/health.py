"""What the review service's ``/health`` says: whether it can do its work, and if not, why,
in one line (the gateway's ``/health`` asks the same of itself: its loops run and the
broker answers). The queue must read its topics and the broker answer; and each background
task of the process (the sampler of ``review --sampler``, a scripted reviewer) must still
run: one that stops is logged at once, with its traceback, and ``/health`` and ``/live``
answer 503 from then on, so a liveness probe restarts the process instead of it serving
on without it. A broker outage fails ``/health`` (readiness) only: the service reconnects
by itself."""

from __future__ import annotations

import asyncio
import logging
from functools import partial

from aiokafka.errors import KafkaError
from pydantic import ValidationError

from monitor_gateway.client import TopicMissing

from .queue import ReviewQueue

log = logging.getLogger("review.health")
BROKER_TIMEOUT = 2.0  # seconds for the broker to answer a probe's metadata request


class Health:
    def __init__(self, queue: ReviewQueue) -> None:
        """The health of a started ``queue``'s service."""
        assert queue.reader is not None, "the queue is started"
        self.queue = queue
        self._tasks: dict[str, asyncio.Task[None]] = {}
        settings = queue.settings
        self.watch(f"review queue's reader of {settings.review_topic} and "
                   f"{settings.labels_topic}", queue.reader)

    def watch(self, name: str, task: asyncio.Task[None]) -> None:
        """``task`` is part of the service's work until the process stops (``name``:
        "review sampler")."""
        self._tasks[name] = task
        task.add_done_callback(partial(self._ended, name))

    def stopped(self) -> str | None:
        """Which of its tasks has stopped, one line; None while all run. Only a restart
        mends that (``/live``)."""
        for name, task in self._tasks.items():
            if task.done():
                return f"the {name} stopped: {_ending(task)}"
        return None

    async def problem(self) -> str | None:
        """Why the service cannot do its work now, one line; None while it can."""
        if stopped := self.stopped():
            return stopped
        if not await self.queue.reachable(BROKER_TIMEOUT):
            return (f"no Kafka broker at {self.queue.settings.kafka_bootstrap} answered "
                    f"within {BROKER_TIMEOUT:g} s")
        return None

    def _ended(self, name: str, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("the %s stopped; /health and /live answer 503 from now on", name,
                      exc_info=exc)


def _ending(task: asyncio.Task[None]) -> str:
    """How ``task`` ended, for anyone who can reach ``/health`` (no login): the message of
    a Kafka or network error (topics, addresses), only the type of any other, whose message
    might quote a record; the log has it whole."""
    if task.cancelled():
        return "cancelled"
    exc = task.exception()
    if exc is None:
        return "it returned"
    if isinstance(exc, TopicMissing | KafkaError | OSError):
        return one_line(exc)
    return f"{type(exc).__name__} (its traceback is in the log)"


def one_line(exc: BaseException) -> str:
    """An exception in one line: a validation error's first, else the message's first."""
    if isinstance(exc, ValidationError):
        error = exc.errors(include_url=False)[0]
        return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
