"""Sending from inside an agent without ever slowing or failing it.

An adapter runs on the agent's own threads; Kafka may be slow or down. So trajectories (or
a run's messages, sent step by step) go into a bounded queue, a daemon thread sends them
through the client in the order queued, and when the queue is full the newest is dropped,
counted, and warned about (at most once a minute). A run whose step was dropped is judged
as incomplete by the gateway (its later messages are dead letters: ``sequence_gap``).

:meth:`Outbox.close` ends the thread: without it the thread would wait for work, or retry
an absent broker every ``retry_after`` seconds, for the rest of the process.

At the interpreter's exit an outbox still open sends what it holds, waiting at most
``exit_wait`` seconds (a WARNING counts what is left unsent): the sending thread is a
daemon, which exit would otherwise stop with the last trajectories of a script that ends
straight after its agent's run still queued.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import queue
import threading
import time

from ..client import SyncTrajectoryProducer
from ..schema import RunEnd, RunStart, RunStep, Trajectory
from ..settings import KafkaSettings

log = logging.getLogger(__name__)


class Outbox:
    def __init__(self, settings: KafkaSettings | None = None, capacity: int = 1000,
                 retry_after: float = 5.0, exit_wait: float = 5.0) -> None:
        self.settings = settings or KafkaSettings()
        self.dropped = 0
        self.sent = 0
        self.retry_after = retry_after
        self.exit_wait = exit_wait
        self._queue: queue.Queue[Trajectory | RunStart | RunStep | RunEnd | None] = \
            queue.Queue(maxsize=capacity)  # None: close()'s wake-up
        self._closed = threading.Event()
        self._warned = 0.0
        self._thread = threading.Thread(target=self._run, name="monitor-gateway-outbox",
                                        daemon=True)
        self._thread.start()
        atexit.register(self._at_exit)

    def offer(self, trajectory: Trajectory | RunStart | RunStep | RunEnd) -> bool:
        """Queue ``trajectory`` (or a run's message) for sending; False (and counted) if
        the queue is full or the outbox closed."""
        if self._closed.is_set():
            self.dropped += 1
            return False
        try:
            self._queue.put_nowait(trajectory)
            return True
        except queue.Full:
            self.dropped += 1
            if time.monotonic() - self._warned > 60:
                self._warned = time.monotonic()
                log.warning("monitor-gateway outbox full: dropped %d trajectories so far "
                            "(is Kafka at %s reachable?)", self.dropped,
                            self.settings.kafka_bootstrap)
            return False

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued was sent; False if ``timeout`` passed first."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self._queue.unfinished_tasks

    def close(self, timeout: float = 10.0) -> bool:
        """Stop the sending thread; what is still queued is not sent (``flush`` first to
        send it) and later offers are dropped. The thread ends at once if it is waiting
        for work or to retry; one connecting or sending ends when that call does (a broker
        that never answers: ``CONNECT_TIMEOUT`` to connect, the client's request timeout to
        send). False if the thread was still running after ``timeout`` seconds."""
        atexit.unregister(self._at_exit)
        self._closed.set()
        with contextlib.suppress(queue.Full):  # full: the thread is not waiting for work,
            self._queue.put_nowait(None)       # and it checks after each item
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _at_exit(self) -> None:
        """Send what is queued before the interpreter exits, for at most ``exit_wait``
        seconds (see the module's docstring). The thread is not closed: closing stops its
        producer, which against a broker already gone logs the client's connection errors
        on the way out; exit ends a daemon thread without a word."""
        if not self.flush(self.exit_wait):
            log.warning("monitor-gateway outbox: %d trajectories or run messages still "
                        "unsent after %gs at exit (is Kafka at %s reachable?)",
                        self._queue.unfinished_tasks, self.exit_wait,
                        self.settings.kafka_bootstrap)

    def _run(self) -> None:
        while not self._closed.is_set():
            try:
                with SyncTrajectoryProducer(self.settings) as producer:
                    while not self._closed.is_set():
                        item = self._queue.get()
                        try:
                            if item is None:  # close()'s wake-up
                                continue
                            if isinstance(item, Trajectory):
                                producer.send(item)
                            else:
                                producer.send_message(item)
                            self.sent += 1
                        except Exception:
                            self.dropped += 1  # the one in hand when the connection broke
                            raise
                        finally:
                            self._queue.task_done()
            except Exception as exc:  # Kafka down: keep queueing (bounded), try again later
                if self._closed.is_set():
                    return
                log.warning("monitor-gateway outbox cannot send (%s); retrying in %gs",
                            exc, self.retry_after)
                self._closed.wait(self.retry_after)
