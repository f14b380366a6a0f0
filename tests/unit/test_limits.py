"""The adaptive concurrency limit: its arithmetic on known latencies, and the asyncio gate."""

from __future__ import annotations

import asyncio

import pytest

from monitor_gateway.limits import GradientLimit, Limiter


def drive(limit: GradientLimit, latency: object, calls: int,
          clock: list[float] | None = None) -> list[int]:
    """Feed ``calls`` latencies, each as a server would answer at the current limit, as if
    every call ran with the limit's worth of calls in flight. Returns the limit after each
    (and appends to ``clock`` the simulated time each call ended: a limit's worth of calls
    finishes every latency)."""
    seen, now = [], 0.0
    for _ in range(calls):
        probe = limit.probing
        rtt = latency(limit.allowed)  # type: ignore[operator]
        now += rtt / limit.allowed
        limit.sample(rtt, now, probe=probe)
        seen.append(limit.allowed)
        if clock is not None:
            clock.append(now)
    return seen


def test_a_server_whose_latency_does_not_grow_gets_the_ceiling() -> None:
    limit = GradientLimit(64)
    assert limit.allowed == 4  # starts by measuring at a few calls
    seen = drive(limit, lambda _: 0.2, 200)
    assert limit.min_rtt == pytest.approx(0.2)
    assert seen[-1] == 64
    assert seen.index(64) < 200  # within a few windows


def test_a_flat_server_gets_the_ceiling_within_about_a_second() -> None:
    """Slow start grows the limit several times over each window while latency holds: a
    burst of a few seconds is served at the ceiling for nearly all of it."""
    clock: list[float] = []
    limit = GradientLimit(64)
    seen = drive(limit, lambda _: 0.2, 200, clock)
    assert seen[0] == 4  # it starts by measuring at a few calls...
    assert clock[seen.index(64)] <= 0.5  # ...and is at the ceiling after two round trips
    assert sorted(set(seen)) == [4, 64]  # (the probe's, then one window at the ceiling)
    assert set(seen[seen.index(64):]) == {64}  # and stays there


def test_a_server_that_queues_past_its_knee_settles_near_the_knee() -> None:
    knee = 16  # beyond 16 calls at once, each call waits for the others (processor sharing)
    limit = GradientLimit(64)
    seen = drive(limit, lambda n: 0.2 * max(1.0, n / knee), 3000)
    settled = seen[-1000:]
    assert knee <= min(settled) and max(settled) <= 2 * knee, (min(settled), max(settled))


def test_latencies_of_calls_admitted_before_the_probe_do_not_count() -> None:
    limit = GradientLimit(64, probe_samples=2)
    limit.sample(5.0, 0.0, probe=False)  # admitted under load before measuring began
    limit.sample(0.3, 0.1, probe=True)
    limit.sample(0.1, 0.2, probe=True)
    assert limit.min_rtt == pytest.approx(0.2) and not limit.probing


def test_timeouts_shrink_the_limit() -> None:
    limit = GradientLimit(64)
    drive(limit, lambda _: 0.2, 300)
    assert limit.allowed == 64
    drive(limit, lambda _: 30.0, 128)  # every call times out: the backend is overloaded
    assert limit.allowed <= 40


async def test_the_gate_admits_at_most_the_limit_and_hands_slots_on_in_order() -> None:
    gate = Limiter(3, adaptive=False)
    order: list[int] = []
    running = 0
    most = 0

    async def call(i: int) -> None:
        nonlocal running, most
        probe = await gate.acquire()
        running += 1
        most = max(most, running)
        order.append(i)
        await asyncio.sleep(0.01)
        running -= 1
        gate.release(probe, 0.01)

    await asyncio.gather(*(call(i) for i in range(20)))
    assert most == 3 and order == list(range(20)) and gate.in_flight == 0


async def test_a_waiter_cancelled_while_its_slot_is_handed_over_gives_it_on() -> None:
    gate = Limiter(1, adaptive=False)
    first = await gate.acquire()
    waiting = asyncio.create_task(gate.acquire())
    behind = asyncio.create_task(gate.acquire())
    await asyncio.sleep(0)
    gate.release(first, None)  # the slot goes to ``waiting``...
    waiting.cancel()  # ...which is cancelled before it runs
    await asyncio.gather(waiting, return_exceptions=True)
    await asyncio.wait_for(behind, 1.0)  # the slot was passed on, not lost
    assert gate.in_flight == 1


async def test_the_limit_is_reported_when_it_changes() -> None:
    reported: list[int] = []
    gate = Limiter(64, adaptive=True, on_change=reported.append, clock=lambda: 0.0)
    for _ in range(40):
        probe = await gate.acquire()
        gate.release(probe, 0.2)
    assert reported[0] == 4 and reported[-1] > 4 and reported == sorted(reported)
