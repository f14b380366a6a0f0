"""A CPU-bound monitor in worker processes (``WORKERS``), so judging never stalls the fetch
loop and one gateway uses every core it is given.

An inline monitor (pure computation) is judged on the fetch loop: right for a fraction of a
millisecond, wrong for the offline monitor's milliseconds on large trajectories, when the
loop would stop fetching, acknowledging and committing while it judges. Each worker builds
its own copy of the monitor from the gateway's settings; the gateway then treats the pool
as an asynchronous backend, bounded by its concurrency limit and timeout.

Hand-offs cost little. A worker gets the records' bytes, not parsed trajectories (pickling
a trajectory and rebuilding it cost more than parsing it: 28 + 74 us against 45 on the
realistic set), many records a hand-off: those that arrive within one turn of the event
loop go together, split between the workers; while every worker has a batch in hand and
one queued behind it, the records that arrive wait for a batch to come back, so the busier
the workers, the larger the batches (at most ``MAX_BATCH``). Batching by the turn of the
loop alone made about one hand-off a record under load (2,681 for 3,000): each returning
batch freed slots for a few records at a time. The worker parses and validates each
record, judges it and grounds its quotes, and sends back only what the verdict needs
(:class:`Judged`) or why the record is no trajectory. A worker that dies (a crash, the OOM
killer) breaks the pool: it is replaced, the records it failed are judged again in
quarantine, one at a time, and the one that killed it fails there, alone, and is retried
like any failed call, then gets an error verdict.

Every pool ends the same way, a broken one as soon as it is replaced and the rest on
``aclose``: shut down off the event loop, its workers given ``SHUTDOWN_WAIT`` seconds to
finish the batches they hold. A worker still judging then (a plugin monitor that hangs)
is named in one WARNING and killed, and its records abandoned: the gateway has left them
uncommitted by then (``SHUTDOWN_GRACE``), and waiting on would outlast the orchestrator's
grace period and end in a SIGKILL of the whole gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import multiprocessing
import os
import signal
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypeVar

from ..calling import judge_inline
from ..children import die_with_parent
from ..evidence import ground
from ..ingest import Rejection, parse_trajectory
from ..schema import Evidence, TaskType, Trajectory
from ..settings import GatewaySettings
from .base import Factory, InlineMonitor, Judgement, MonitorFailure

log = logging.getLogger(__name__)
_monitor: InlineMonitor | None = None  # a worker process's own copy
_max_bytes = 0  # and the gateway's MAX_MESSAGE_BYTES
# Judging is throughput work; the fetch loop is latency work. When the workers and the
# gateway share too few cores, the scheduler lets the fetch loop go first: with 2 workers on
# 2 cores, how late a 1 ms timer fires on it at p99 fell from 3.0-3.8 ms to 1.8-2.2 ms, at
# the same throughput (three alternating pairs of benchmarks/offline.py's WORKERS=2 case).
WORKER_NICENESS = 10
# records a hand-off at most: enough that a message's cost is spread thin, few enough that
# every worker gets a share of a burst
MAX_BATCH = 64
# records of a returned batch whose verdicts are built in one turn of the event loop
SETTLED = 16
# seconds a closing pool's workers get to finish the batches they hold before they are
# killed: a batch takes well under a second to judge (64 records of the offline monitor), and
# the gateway's SHUTDOWN_GRACE (10 s) plus this stays inside Kubernetes' 30 s grace period
SHUTDOWN_WAIT = 5.0
A = TypeVar("A")
B = TypeVar("B")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Judged:
    """A record judged in a worker: what its verdict needs of the trajectory, the monitor's
    outcome (its quotes already grounded, in ``evidence``)."""

    id: str
    task_type: TaskType | None
    metadata: dict[str, Any]
    outcome: Judgement | MonitorFailure
    evidence: list[Evidence]


def _start(build: Factory, settings: GatewaySettings) -> None:
    global _monitor, _max_bytes
    die_with_parent()  # a gateway killed without a chance to shut its pool leaves no worker
    # Ctrl-C signals the terminal's whole process group: the gateway drains on it, and its
    # workers finish what they hold until the pool shuts them down. A worker that took the
    # SIGINT printed a KeyboardInterrupt traceback, and one that was judging sent it back
    # as its batch's outcome, which ended the gateway with exit code 130, undrained.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(os, "nice"):  # POSIX
        os.nice(WORKER_NICENESS)
    monitor = build(settings.model_copy(update={"workers": 0}))
    assert isinstance(monitor, InlineMonitor)
    _monitor, _max_bytes = monitor, settings.max_message_bytes


def _judge_trajectory(trajectory: Trajectory) -> Judgement:
    assert _monitor is not None, "the worker's initializer builds the monitor"
    return _monitor.judge_now(trajectory)


def _judge(values: list[bytes | None]) -> list[Judged | Rejection]:
    assert _monitor is not None, "the worker's initializer builds the monitor"
    return [_judge_one(_monitor, value) for value in values]


def _judge_one(monitor: InlineMonitor, value: bytes | None) -> Judged | Rejection:
    trajectory = parse_trajectory(value, _max_bytes)
    if isinstance(trajectory, Rejection):
        return trajectory
    outcome = judge_inline(monitor, trajectory)
    evidence: list[Evidence] = []
    if isinstance(outcome, Judgement) and outcome.quotes:
        evidence = ground(trajectory, outcome.quotes)
        outcome = replace(outcome, quotes=[])  # grounded: the gateway needs them no more
    return Judged(trajectory.id, trajectory.task_type, trajectory.metadata, outcome, evidence)


Waiting = list[tuple[bytes | None, "asyncio.Future[Judged | Rejection]"]]


class PooledMonitor:
    """``inner`` (an inline monitor) judged in ``workers`` processes. The parent keeps
    ``inner`` for its card, and to judge a run's steps as they arrive (a step costs
    little; issue 36); each worker builds its own with ``build`` (the registry's
    ``build_monitor``, passed by name to the processes).

    A dying worker fails every call in its pool, not only the one that killed it. So each
    record that saw a pool break becomes a suspect: suspects are judged one at a time in a
    one-process quarantine pool, where an innocent one is judged and the culprit fails
    alone, and its retries stay there instead of breaking the main pool again.
    """

    def __init__(self, inner: InlineMonitor, build: Factory, settings: GatewaySettings,
                 workers: int) -> None:
        self.inner = inner
        self.card = inner.card
        self.build = build
        self.settings = settings
        self.workers = workers
        self._pool = self._new_pool(workers)
        self._quarantine: ProcessPoolExecutor | None = None
        self._one_at_a_time = asyncio.Lock()
        self._suspects: OrderedDict[int, None] = OrderedDict()  # records' hashes
        self._waiting: Waiting = []
        self._out = 0  # batches handed off and not yet back
        self._most_out = 2 * workers
        self._closed = False  # aclose began: a broken pool is no longer replaced
        self._retiring: set[asyncio.Task[None]] = set()  # broken pools shutting down

    @property
    def room(self) -> int:
        """Records in flight that give every worker a full batch in hand and one queued
        behind it: the gateway lets at least this many records wait for or in the workers,
        whatever ``CONCURRENCY``. With 64 (the default ``CONCURRENCY``) and two workers,
        batches held 16 records, and the gateway's process spent 215-263 us of CPU a
        trajectory against 155-162 us with 256 (offline monitor, alternating runs:
        docs/benchmark-log.md, run 39)."""
        return self._most_out * MAX_BATCH

    def _new_pool(self, workers: int) -> ProcessPoolExecutor:
        # spawn, not fork: the parent has an event loop, sockets and threads (the metrics
        # server) that a forked child must not inherit
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start, initargs=(self.build, self.settings))
        for _ in range(workers):  # start them now, not on the first trajectories
            pool.submit(int)
        return pool

    async def judge(self, trajectory: Trajectory) -> Judgement:
        """One trajectory judged in a worker, on its own (a cascade's stage)."""
        return await self._guarded(hash(trajectory.id),
                                   partial(_submit, _judge_trajectory, trajectory))

    async def judge_record(self, value: bytes | None) -> Judged | Rejection:
        """A record's value parsed, validated and judged in a worker, with the other records
        of this turn of the loop: what its verdict needs, or why it is no trajectory."""
        async def alone(pool: ProcessPoolExecutor) -> Judged | Rejection:
            [judged] = await _submit(_judge, [value], pool)
            return judged

        return await self._guarded(hash(value), alone, partial(self._batched, value))

    async def _guarded(self, key: int, alone: Callable[[ProcessPoolExecutor], Awaitable[T]],
                       first: Callable[[], Awaitable[T]] | None = None) -> T:
        """``first`` (by default ``alone`` in the pool), or, for a suspect, ``alone`` in
        quarantine."""
        if key not in self._suspects:
            pool = self._pool
            try:
                return await (first() if first is not None else alone(pool))
            except BrokenProcessPool:
                if self._closed:  # killed by aclose: nothing is judged again
                    raise
                if pool is self._pool:  # the first call to see it replaces it
                    self._pool = self._new_pool(self.workers)
                    self._retire(pool, "pool")
                self._suspect(key)
        async with self._one_at_a_time:
            if self._closed:
                raise BrokenProcessPool("the monitor's worker pool is closed")
            quarantine = self._quarantine or self._new_pool(1)
            self._quarantine = quarantine
            try:
                answer = await alone(quarantine)
            except BrokenProcessPool:
                if quarantine is self._quarantine:
                    self._quarantine = None
                    self._retire(quarantine, "quarantine pool")
                raise
        self._suspects.pop(key, None)  # innocent after all
        return answer

    def _batched(self, value: bytes | None) -> asyncio.Future[Judged | Rejection]:
        """The record waits for its hand-off: with the others of this turn of the loop, or,
        while every worker has a batch in hand and one queued behind it, with all that
        arrive until one comes back. The busier the workers, the larger the batches."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Judged | Rejection] = loop.create_future()
        self._waiting.append((value, future))
        if len(self._waiting) == 1 and self._out < self._most_out:
            loop.call_soon(self._hand_off)
        return future

    def _hand_off(self) -> None:
        free = self._most_out - self._out
        if free <= 0 or not self._waiting:
            return
        size = min(MAX_BATCH, math.ceil(len(self._waiting) / free))
        while self._waiting and self._out < self._most_out:
            batch, self._waiting = self._waiting[:size], self._waiting[size:]
            try:
                sent = self._pool.submit(_judge, [value for value, _ in batch])
            except BrokenProcessPool as exc:  # broken before this turn: each call replaces
                _settle(batch, exc)           # it once, and retries
            else:
                self._out += 1
                sent.add_done_callback(partial(self._deliver, batch))

    def _deliver(self, batch: Waiting, done: Future[list[Judged | Rejection]]) -> None:
        """Runs on the executor's thread: the outcomes go to their records on the loop."""
        outcome = asyncio.CancelledError() if done.cancelled() else (
            done.exception() or done.result())
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            batch[0][1].get_loop().call_soon_threadsafe(self._returned, batch, outcome)

    def _returned(self, batch: Waiting, outcome: list[Judged | Rejection] | BaseException
                  ) -> None:
        self._out -= 1
        _settle_in_turns(batch, outcome)
        self._hand_off()

    def _suspect(self, key: int, most: int = 4096) -> None:
        self._suspects[key] = None
        if len(self._suspects) > most:
            self._suspects.popitem(last=False)

    def _retire(self, pool: ProcessPoolExecutor, what: str) -> None:
        """A broken pool shut down as every pool is (``_shut``), in the background; aclose
        waits for it."""
        task = asyncio.create_task(self._shut(pool, what, SHUTDOWN_WAIT))
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def aclose(self, wait: float = SHUTDOWN_WAIT) -> None:
        """Cancel the records still waiting for a hand-off or a worker, and wait (off the
        loop) up to ``wait`` seconds for the workers to finish the batches they hold and
        exit; workers still judging then are killed (``_shut``). A pool left to shut down
        behind the gateway races the interpreter's exit: a batch that comes back then goes
        to an event loop being closed. (A "Bad file descriptor" seen once at exit was
        probably that race too: on Python 3.11, exit wakes each pool's manager thread
        without a lock, which CPython gh-125451 added in 3.12.8 and 3.13.1; it was never
        reproduced.) Waiting costs at most a batch's judging, or ``wait``.
        Broken pools still shutting down (``_retire``) are waited for too."""
        self._closed = True
        waiting, self._waiting = self._waiting, []  # a batch that returns hands off none
        _settle(waiting, asyncio.CancelledError())
        pools = [(self._pool, "pool"), (self._quarantine, "quarantine pool")]
        await asyncio.gather(*self._retiring, *(self._shut(pool, what, wait)
                                                for pool, what in pools if pool is not None))

    async def _shut(self, pool: ProcessPoolExecutor, what: str, wait: float) -> None:
        """Shut ``pool`` down, its workers given ``wait`` seconds to finish what they hold;
        then one WARNING names the workers still judging and what they hold, and they are
        killed (SIGKILL: a hung plugin may ignore SIGTERM). The pool's manager thread sees
        them die, fails their calls (``BrokenProcessPool``) and ends the shutdown."""
        workers = list(pool._processes.values()) if pool._processes else []
        closing = asyncio.ensure_future(
            asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True))
        done, _ = await asyncio.wait({closing}, timeout=wait)
        if not done:
            alive = [p for p in workers if p.is_alive()]
            held = [tuple(w.args) for w in list(pool._pending_work_items.values())
                    if not w.future.done()]
            # a call's argument: a batch of records or a trajectory (none: a warm-up)
            records = sum(len(arg) if isinstance(arg, list) else 1
                          for args in held for arg in args)
            log.warning("monitor %s's worker %s still judging after %g s of shutdown: "
                        "abandoning %d record(s) in %d hand-off(s) and killing worker "
                        "process(es) %s", self.card.name, what, wait, records, len(held),
                        ", ".join(str(p.pid) for p in alive) or "(none left)")
            for process in alive:
                process.kill()
        await closing


def _submit(call: Callable[[A], B], arg: A, pool: ProcessPoolExecutor) -> asyncio.Future[B]:
    return asyncio.wrap_future(pool.submit(call, arg))


def _settle_in_turns(batch: Waiting, outcome: list[Judged | Rejection] | BaseException
                     ) -> None:
    """``SETTLED`` records of a returned batch now, the rest in later turns of the loop:
    each record's verdict is built and sent as its future is settled, at 70-100 us of the
    gateway's own CPU a record (pool path, no Kafka), so a whole batch of 64 at once would
    hold the loop for 5-6 ms, past the fetch loop's 5 ms target for a timer's lateness."""
    now, later = batch[:SETTLED], batch[SETTLED:]
    if isinstance(outcome, BaseException):
        _settle(now, outcome)
        rest: list[Judged | Rejection] | BaseException = outcome
    else:
        _settle(now, outcome[:SETTLED])
        rest = outcome[SETTLED:]
    if later:
        asyncio.get_running_loop().call_soon(_settle_in_turns, later, rest)


def _settle(batch: Waiting, outcome: list[Judged | Rejection] | BaseException) -> None:
    for i, (_, future) in enumerate(batch):
        if future.done():  # cancelled: its record is no longer waited for
            continue
        if isinstance(outcome, asyncio.CancelledError):  # the pool was shut down
            future.cancel()
        elif isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome[i])
