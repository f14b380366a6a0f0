"""Runs sent step by step (issue 36): each open run's messages held in memory until its end.

All of a run's messages share its key, so a partition and the one gateway that owns it. A
run's records are finished (their offsets may be committed) only once its final verdict is
acknowledged, and the offset tracker commits a partition only below its first unfinished
record: the position never passes the first message of the partition's oldest open run.
A crash or a rebalance therefore re-reads every open run from its start, and no state is
stored anywhere else. Each message carries its run's sequence number, so what a re-read
or a producer's retry delivers twice is recognised and skipped.

Open runs are bounded: a run silent for ``RUN_TIMEOUT`` seconds, or the oldest when
``MAX_OPEN_RUNS`` or ``MAX_OPEN_RUN_BYTES`` is reached, is judged on what it has, and its
verdict says it was ``incomplete`` and why.

Pure bookkeeping: the gateway judges, publishes and finishes records.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import NamedTuple

from aiokafka import TopicPartition

from .ingest import Rejection, parse_run_message
from .pipeline import Work
from .schema import Incomplete, RunEnd, RunStart, Step, Trajectory

# closed runs remembered, for telling a late duplicate from a message of no run
REMEMBERED = 10_000


@dataclass(eq=False)
class OpenRun:
    """A run between its start and its final verdict: its messages' records (``works``,
    the first one the start's) and what they said."""

    start: RunStart
    partition: TopicPartition
    works: list[Work]
    size: int
    last: float  # when its latest message arrived (monotonic)
    steps: list[Step] = field(default_factory=list)
    end: RunEnd | None = None
    incomplete: Incomplete | None = None
    flagged_step: int | None = None  # the first step that flagged, if any
    unacknowledged: int = 0  # step judgements and verdicts not yet acknowledged
    judged_so_far: int = 0  # judgements of the run so far (a monitor without judge_step)
    final_acknowledged: bool = False
    released: bool = False  # its records marked done (once)

    @property
    def id(self) -> str:
        return self.start.trajectory_id

    @property
    def seq(self) -> int:
        """The sequence number of its latest message."""
        return len(self.steps) + (self.end is not None)

    @property
    def opened(self) -> Work:
        return self.works[0]

    def trajectory(self) -> Trajectory:
        """The run as one trajectory, as it would have been sent whole; an incomplete run
        without steps has nothing to judge and fails validation (``ValueError``)."""
        start = self.start
        return Trajectory(id=start.trajectory_id, request=start.request,
                          response=self.end.response if self.end is not None else "",
                          steps=list(self.steps), task_type=start.task_type,
                          metadata=start.metadata)

    @property
    def finished(self) -> bool:
        """Its final verdict and every step verdict acknowledged: its records are done."""
        return self.final_acknowledged and not self.unacknowledged


class Duplicate(NamedTuple):
    """A message already held or judged (a re-read, a producer's retry)."""


class Held(NamedTuple):
    """A start or a step, now held; ``step``: the index of the step it added."""

    run: OpenRun
    step: int | None


class Ended(NamedTuple):
    run: OpenRun


Received = Duplicate | Rejection | Held | Ended


class Runs:
    def __init__(self, max_open: int, max_bytes: int, timeout: float,
                 max_message_bytes: int) -> None:
        self.max_open = max_open
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.max_message_bytes = max_message_bytes
        self.open: dict[str, OpenRun] = {}  # oldest first
        self.size = 0  # bytes of every open run's messages
        # closed runs: the last message each held, why it closed, and its partition
        self._closed: OrderedDict[str, tuple[int, Incomplete | None, TopicPartition]] = \
            OrderedDict()

    def receive(self, work: Work) -> tuple[Received, list[OpenRun]]:
        """What the record is to its run, and the runs the bounds closed to make room (the
        oldest, judged as incomplete)."""
        message = parse_run_message(work.record.value, self.max_message_bytes)
        if isinstance(message, Rejection):
            return message, []
        if work.record.key != message.trajectory_id.encode():  # its run may be elsewhere
            return Rejection("invalid_schema", "a run's messages must be keyed by its "
                                               "trajectory_id, so that all reach one "
                                               "partition"), []
        size = len(work.record.value or b"")
        tp = TopicPartition(work.record.topic, work.record.partition)
        run = self.open.get(message.trajectory_id)
        if run is None:
            if isinstance(message, RunStart):
                if message.trajectory_id in self._closed:
                    return Duplicate(), []
                run = OpenRun(message, tp, [work], size, time.monotonic())
                self.open[run.id] = run
                self.size += size
                return Held(run, None), self._make_room()
            return self._unknown(message.trajectory_id, message.seq), []
        if message.seq <= run.seq:
            return Duplicate(), []
        if message.seq > run.seq + 1:
            return Rejection("sequence_gap", f"run {run.id!r}: message {message.seq} after "
                                             f"{run.seq}; the run is judged without it"), []
        run.works.append(work)
        run.size += size
        run.last = time.monotonic()
        self.size += size
        if isinstance(message, RunEnd):
            run.end = message
            self._close(run, None)
            return Ended(run), []
        assert not isinstance(message, RunStart)  # a start's seq is 0: a duplicate above
        run.steps.append(message.step)
        return Held(run, len(run.steps) - 1), self._make_room()

    def _unknown(self, run_id: str, seq: int) -> Duplicate | Rejection:
        closed = self._closed.get(run_id)
        if closed is None:
            return Rejection("unknown_run", f"no open run {run_id!r} (its start was never "
                                            "read, or it was judged long ago)")
        last, incomplete, _ = closed
        if seq <= last:
            return Duplicate()
        return Rejection("unknown_run", f"run {run_id!r} was already judged as incomplete "
                                        f"({incomplete or 'ended'}) at message {last}")

    def _make_room(self) -> list[OpenRun]:
        closed = []
        while len(self.open) > self.max_open or (self.size > self.max_bytes
                                                 and len(self.open) > 1):
            oldest = next(iter(self.open.values()))
            self._close(oldest, "open_runs" if len(self.open) > self.max_open
                        else "open_run_bytes")
            closed.append(oldest)
        return closed

    def expired(self, now: float | None = None) -> list[OpenRun]:
        """Runs silent past the timeout, closed as incomplete."""
        now = time.monotonic() if now is None else now
        silent = [run for run in self.open.values() if now - run.last > self.timeout]
        for run in silent:
            self._close(run, "timeout")
        return silent

    def _close(self, run: OpenRun, incomplete: Incomplete | None) -> None:
        run.incomplete = incomplete
        del self.open[run.id]
        self.size -= run.size
        self._closed[run.id] = (run.seq, incomplete, run.partition)
        while len(self._closed) > REMEMBERED:
            self._closed.popitem(last=False)

    def forget(self, partitions: set[TopicPartition]) -> None:
        """Drop the runs of revoked partitions, open or closed: their next owner (this
        gateway again, perhaps) reads every run not yet committed past from its start."""
        for run in [run for run in self.open.values() if run.partition in partitions]:
            del self.open[run.id]
            self.size -= run.size
        for run_id in [k for k, (_, _, tp) in self._closed.items() if tp in partitions]:
            del self._closed[run_id]

    def held(self) -> int:
        """Records held by open runs: fetched, and waiting for their run's end."""
        return sum(len(run.works) for run in self.open.values())
