import asyncio

import pytest
from monitors import card

from monitor_gateway.breaker import CircuitBreaker
from monitor_gateway.calling import (
    Backend,
    Deadlines,
    RetryPolicy,
    call_monitor,
    judge_inline,
)
from monitor_gateway.limits import Limiter
from monitor_gateway.monitors import Judgement
from monitor_gateway.monitors.base import MonitorFailure, MonitorUnavailable
from monitor_gateway.schema import Trajectory

TRAJECTORY = Trajectory(id="t", request="q", response="a")
FAST = RetryPolicy(timeout=0.2, retries=2, backoff=0.001)
DEADLINES = Deadlines(resolution=0.01)


def backend(threshold: int = 5, budget: float = 600.0, wait: bool = True) -> Backend:
    return Backend(Limiter(64, adaptive=False),
                   CircuitBreaker(threshold=threshold, budget=budget, wait=wait,
                                  cooldown=0.01, max_cooldown=0.05))


class Sequence:
    """Answers with the next item: an exception to raise, "hang", or a score."""

    def __init__(self, *script: object) -> None:
        self.card = card("sequence")
        self.script = list(script)
        self.calls = 0

    async def judge(self, trajectory: Trajectory) -> Judgement:
        item = self.script[self.calls]
        self.calls += 1
        if isinstance(item, Exception):
            raise item
        if item == "hang":
            await asyncio.sleep(60)
        if item == "stubborn":  # swallows the cancellation and answers late
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                return Judgement(score=0.1)
        assert isinstance(item, float)
        return Judgement(score=item)


async def test_a_transient_failure_is_retried() -> None:
    monitor = Sequence(ConnectionError("reset"), "hang", 0.7)
    outcome, seconds = await call_monitor(monitor, TRAJECTORY, FAST, DEADLINES, backend())
    assert outcome == Judgement(score=0.7)
    assert monitor.calls == 3
    assert 0.2 <= seconds < 0.5  # time in the calls: the hang's 0.2 s timeout, no backoff


async def test_retries_are_bounded_and_the_last_reason_is_kept() -> None:
    monitor = Sequence(ConnectionError("reset"), ConnectionError("reset"), "hang", 0.7)
    outcome, _ = await call_monitor(monitor, TRAJECTORY, FAST, DEADLINES, backend())
    assert outcome == MonitorFailure("timed out after 0.2s (after 3 attempts)", attempts=3)
    assert monitor.calls == 3


async def test_a_score_outside_the_unit_interval_is_a_failure() -> None:
    outcome, _ = await call_monitor(Sequence(1.5), TRAJECTORY, RetryPolicy(retries=0), DEADLINES,
                                 backend())
    assert isinstance(outcome, MonitorFailure)
    assert "outside [0, 1]" in outcome.reason


def test_backoff_grows_but_stays_capped() -> None:
    policy = RetryPolicy(backoff=1.0, max_backoff=4.0)
    assert all(0 <= policy.delay(0) <= 1.0 for _ in range(100))
    assert all(0 <= policy.delay(10) <= 4.0 for _ in range(100))
    assert max(policy.delay(10) for _ in range(200)) > 1.0


async def test_a_call_that_swallows_its_cancellation_still_times_out() -> None:
    outcome, _ = await call_monitor(Sequence("stubborn"), TRAJECTORY,
                                 RetryPolicy(timeout=0.05, retries=0), DEADLINES, backend())
    assert outcome == MonitorFailure("timed out after 0.05s (after 1 attempts)", attempts=1)
    await asyncio.sleep(0.01)  # and the task can still await: the cancellation was taken back


async def test_an_outside_cancellation_is_not_mistaken_for_a_timeout() -> None:
    task = asyncio.create_task(call_monitor(Sequence("hang"), TRAJECTORY, FAST, DEADLINES,
                                            backend()))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_many_concurrent_calls_each_keep_their_own_deadline() -> None:
    calls = [call_monitor(Sequence("hang" if i % 2 else 0.3), TRAJECTORY,
                          RetryPolicy(timeout=0.1, retries=0), DEADLINES, backend())
             for i in range(50)]
    outcomes = [o for o, _ in await asyncio.gather(*calls)]
    assert [isinstance(o, MonitorFailure) for o in outcomes] == [i % 2 == 1 for i in range(50)]


class Raising:
    card = card("raising")

    def __init__(self) -> None:
        self.calls = 0

    def judge_now(self, trajectory: Trajectory) -> Judgement:
        self.calls += 1
        raise KeyError("feature")

    async def judge(self, trajectory: Trajectory) -> Judgement:
        return self.judge_now(trajectory)


def test_an_inline_monitor_that_fails_is_not_retried() -> None:
    monitor = Raising()
    outcome = judge_inline(monitor, TRAJECTORY)
    assert outcome == MonitorFailure("KeyError: 'feature' (pure computation: not retried)",
                                     attempts=1)
    assert monitor.calls == 1


class Outage:
    """Refuses every call while ``down`` is set, as a stopped server does."""

    card = card("outage")

    def __init__(self) -> None:
        self.down = True
        self.calls = 0

    async def judge(self, trajectory: Trajectory) -> Judgement:
        self.calls += 1
        await asyncio.sleep(0.001)
        if self.down:
            raise ConnectionRefusedError("connection refused")
        return Judgement(score=0.6)


async def test_an_outage_is_waited_out_and_every_call_judged_late() -> None:
    monitor, shared = Outage(), backend(threshold=3)
    calls = [asyncio.create_task(call_monitor(monitor, TRAJECTORY, FAST, DEADLINES, shared))
             for _ in range(50)]
    await asyncio.sleep(0.3)
    down = shared.breaker.state
    assert down != "closed" and shared.breaker.holding()
    refused_while_down = monitor.calls
    monitor.down = False
    outcomes = [o for o, _ in await asyncio.gather(*calls)]
    assert outcomes == [Judgement(score=0.6)] * 50  # not one error verdict
    assert shared.breaker.state == "closed" and not shared.breaker.holding()
    # while open, the breaker let one probe through at a time instead of 50 calls' retries
    assert refused_while_down < 50 + 30


async def test_an_outage_longer_than_the_budget_fails_under_the_fail_policy() -> None:
    outcome, _ = await call_monitor(Outage(), TRAJECTORY, FAST, DEADLINES,
                                 backend(threshold=1, budget=0.1))
    assert isinstance(outcome, MonitorFailure)
    assert "over the outage budget of 0.1s" in outcome.reason
    assert "connection refused" in outcome.reason


async def test_failing_fast_is_a_setting() -> None:
    monitor = Outage()
    outcome, _ = await call_monitor(monitor, TRAJECTORY, FAST, DEADLINES,
                                 backend(threshold=1, wait=False))
    assert isinstance(outcome, MonitorFailure)
    assert "OUTAGE_POLICY=fail" in outcome.reason
    assert monitor.calls == 1


async def test_an_error_about_one_trajectory_is_not_an_outage() -> None:
    """A backend that answers, even with an error, closes the breaker's count: a poison
    trajectory gets its bounded retries and an error verdict, and opens nothing."""
    shared = backend(threshold=2)
    monitor = Sequence(MonitorUnavailable("503"), ValueError("bad reply"),
                       MonitorUnavailable("503"), ValueError("bad reply"))
    outcome, _ = await call_monitor(monitor, TRAJECTORY, RetryPolicy(retries=3, backoff=0.001),
                                 DEADLINES, shared)
    assert isinstance(outcome, MonitorFailure) and outcome.attempts == 4
    assert shared.breaker.state == "closed"
