"""A CPU-bound monitor in worker processes (``WORKERS``), so judging never stalls the fetch
loop and one gateway uses every core it is given.

An inline monitor (pure computation) is judged on the fetch loop: right for a fraction of a
millisecond, wrong for the offline monitor's milliseconds on large trajectories, when the
loop would stop fetching, acknowledging and committing while it judges. Each worker builds
its own copy of the monitor from the gateway's settings; the gateway then treats the pool
as an asynchronous backend, bounded by its concurrency limit and timeout. A worker that
dies (a crash, the OOM killer) breaks the pool: it is replaced, the calls it failed are
judged again in quarantine, and the one that killed it fails there, alone, and is retried
like any failed call, then gets an error verdict.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..children import die_with_parent
from ..schema import Trajectory
from ..settings import GatewaySettings
from .base import Factory, InlineMonitor, Judgement

_monitor: InlineMonitor | None = None  # a worker process's own copy
# Judging is throughput work; the fetch loop is latency work. When the workers and the
# gateway share too few cores, the scheduler lets the fetch loop go first: with 2 workers on
# 2 cores, how late a 1 ms timer fires on it at p99 fell from 3.0-3.8 ms to 1.8-2.2 ms, at
# the same throughput (three alternating pairs of benchmarks/offline.py's WORKERS=2 case).
WORKER_NICENESS = 10


def _start(build: Factory, settings: GatewaySettings) -> None:
    global _monitor
    die_with_parent()  # a gateway killed without a chance to shut its pool leaves no worker
    if hasattr(os, "nice"):  # POSIX
        os.nice(WORKER_NICENESS)
    monitor = build(settings.model_copy(update={"workers": 0}))
    assert isinstance(monitor, InlineMonitor)
    _monitor = monitor


def _judge(trajectory: Trajectory) -> Judgement:
    assert _monitor is not None, "the worker's initializer builds the monitor"
    return _monitor.judge_now(trajectory)


class PooledMonitor:
    """``inner`` (an inline monitor) judged in ``workers`` processes. The parent keeps
    ``inner`` for its card only; each worker builds its own with ``build`` (the registry's
    ``build_monitor``, passed by name to the processes).

    A dying worker fails every call in its pool, not only the one that killed it. So each
    call that saw a pool break becomes a suspect: suspects are judged one at a time in a
    one-process quarantine pool, where an innocent one is judged and the culprit fails
    alone, and its retries stay there instead of breaking the main pool again.
    """

    def __init__(self, inner: InlineMonitor, build: Factory, settings: GatewaySettings,
                 workers: int) -> None:
        self.card = inner.card
        self.build = build
        self.settings = settings
        self.workers = workers
        self._pool = self._new_pool(workers)
        self._quarantine: ProcessPoolExecutor | None = None
        self._one_at_a_time = asyncio.Lock()
        self._suspects: OrderedDict[str, None] = OrderedDict()

    def _new_pool(self, workers: int) -> ProcessPoolExecutor:
        # spawn, not fork: the parent has an event loop, sockets and threads (the metrics
        # server) that a forked child must not inherit
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start, initargs=(self.build, self.settings))
        for _ in range(workers):  # start them now, not on the first trajectories
            pool.submit(int)
        return pool

    async def judge(self, trajectory: Trajectory) -> Judgement:
        if trajectory.id not in self._suspects:
            pool = self._pool
            try:
                return await self._run(pool, trajectory)
            except BrokenProcessPool:
                if pool is self._pool:  # the first call to see it replaces it
                    self._pool = self._new_pool(self.workers)
                    pool.shutdown(wait=False)
                self._suspect(trajectory.id)
        async with self._one_at_a_time:
            quarantine = self._quarantine or self._new_pool(1)
            self._quarantine = quarantine
            try:
                judgement = await self._run(quarantine, trajectory)
            except BrokenProcessPool:
                self._quarantine = None
                quarantine.shutdown(wait=False)
                raise
        self._suspects.pop(trajectory.id, None)  # innocent after all
        return judgement

    async def _run(self, pool: ProcessPoolExecutor, trajectory: Trajectory) -> Judgement:
        return await asyncio.get_running_loop().run_in_executor(pool, _judge, trajectory)

    def _suspect(self, trajectory_id: str, most: int = 4096) -> None:
        self._suspects[trajectory_id] = None
        if len(self._suspects) > most:
            self._suspects.popitem(last=False)

    async def aclose(self) -> None:
        for pool in (self._pool, self._quarantine):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
