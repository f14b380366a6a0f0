import asyncio

from monitors import card

from monitor_gateway.calling import MonitorFailure, RetryPolicy, call_monitor
from monitor_gateway.monitors import Judgement
from monitor_gateway.schema import Trajectory

TRAJECTORY = Trajectory(id="t", request="q", response="a")
FAST = RetryPolicy(timeout=0.2, retries=2, backoff=0.001)


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
        assert isinstance(item, float)
        return Judgement(score=item)


async def test_a_transient_failure_is_retried() -> None:
    monitor = Sequence(ConnectionError("reset"), "hang", 0.7)
    outcome = await call_monitor(monitor, TRAJECTORY, FAST)
    assert outcome == Judgement(score=0.7)
    assert monitor.calls == 3


async def test_retries_are_bounded_and_the_last_reason_is_kept() -> None:
    monitor = Sequence(ConnectionError("reset"), ConnectionError("reset"), "hang", 0.7)
    outcome = await call_monitor(monitor, TRAJECTORY, FAST)
    assert outcome == MonitorFailure("timed out after 0.2s (after 3 attempts)", attempts=3)
    assert monitor.calls == 3


async def test_a_score_outside_the_unit_interval_is_a_failure() -> None:
    outcome = await call_monitor(Sequence(1.5), TRAJECTORY, RetryPolicy(retries=0))
    assert isinstance(outcome, MonitorFailure)
    assert "outside [0, 1]" in outcome.reason


def test_backoff_grows_but_stays_capped() -> None:
    policy = RetryPolicy(backoff=1.0, max_backoff=4.0)
    assert all(0 <= policy.delay(0) <= 1.0 for _ in range(100))
    assert all(0 <= policy.delay(10) <= 4.0 for _ in range(100))
    assert max(policy.delay(10) for _ in range(200)) > 1.0
