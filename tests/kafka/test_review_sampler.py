"""The review sampler on the real broker, as its own process: killed with SIGKILL while
verdicts stream in and started again, it loses no pick and makes none twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
from kafka_io import committed, consume, produce
from verdicts import verdict

from monitor_gateway.embedded import create_topics
from monitor_gateway.schema import ReviewRequest, Trajectory
from monitor_gateway.settings import GatewaySettings
from review.sampling import Design, pick

pytestmark = pytest.mark.kafka
VERDICTS = 600


def start_sampler(settings: GatewaySettings, review_topic: str, group: str
                  ) -> subprocess.Popen[bytes]:
    env = {**os.environ, "MONITOR_GATEWAY_SAMPLER_GROUP": group,
           "MONITOR_GATEWAY_SAMPLER_BATCH": "20", "MONITOR_GATEWAY_SAMPLE_SEED": "kill-test"}
    return subprocess.Popen(
        [sys.executable, "-m", "monitor_gateway", "review-sampler",
         "--bootstrap", settings.kafka_bootstrap, "--verdict-topic", settings.verdict_topic,
         "--input-topic", settings.input_topic, "--review-topic", review_topic,
         "--sample-flagged", "0.5", "--sample-unflagged", "0.2"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


async def test_a_sigkilled_sampler_restarts_without_losing_or_repeating_a_pick(
        settings: GatewaySettings) -> None:
    review_topic, group = f"review-{uuid.uuid4().hex[:8]}", f"sampler-{uuid.uuid4().hex[:8]}"
    await create_topics(settings, {review_topic: 2})
    verdicts = [verdict(f"t{i:04d}", (i * 37 % 100) / 100) for i in range(VERDICTS)]
    trajectories = [Trajectory(id=v.trajectory_id, request="do it", response=f"done {i}")
                    for i, v in enumerate(verdicts)]
    await produce(settings.kafka_bootstrap, settings.input_topic,
                  [(t.id.encode(), t.model_dump_json().encode(), []) for t in trajectories])

    async def stream() -> None:  # verdicts keep coming while the sampler dies and restarts
        for i in range(0, VERDICTS, 20):
            await produce(settings.kafka_bootstrap, settings.verdict_topic,
                          [(v.trajectory_id.encode(), v.model_dump_json().encode(), [])
                           for v in verdicts[i:i + 20]])
            await asyncio.sleep(0.25)

    streaming = asyncio.create_task(stream())
    sampler = start_sampler(settings, review_topic, group)
    try:
        first = await consume(settings.kafka_bootstrap, review_topic, 1, timeout=60)
        assert first, sampler.communicate()[1].decode() if sampler.poll() is not None else ""
        sampler.send_signal(signal.SIGKILL)
        sampler.wait()
        killed_at = await committed(settings.kafka_bootstrap, group, settings.verdict_topic)
        assert sum(p or 0 for p in killed_at.values()) < VERDICTS  # it died mid-stream
        sampler = start_sampler(settings, review_topic, group)
        await streaming
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # until the group has every verdict committed
            positions = await committed(settings.kafka_bootstrap, group, settings.verdict_topic)
            if sum(p or 0 for p in positions.values()) == VERDICTS:
                break
            await asyncio.sleep(0.5)
        assert sum(p or 0 for p in positions.values()) == VERDICTS
    finally:
        streaming.cancel()
        sampler.terminate()
        sampler.wait(30)
    design = Design(flagged=0.5, unflagged=0.2, seed="kill-test")
    expected = {f"{v.trajectory_id}@1": pick(v, design) for v in verdicts}
    expected = {key: sampling for key, sampling in expected.items() if sampling is not None}
    records = await consume(settings.kafka_bootstrap, review_topic, len(expected), timeout=5)
    requests = [ReviewRequest.model_validate_json(r.value) for r in records]
    by_id: dict[str, list[ReviewRequest]] = {}
    for request in requests:
        by_id.setdefault(request.id, []).append(request)
    assert set(by_id) == set(expected)  # nothing lost, nothing picked that should not be
    for key, sent in by_id.items():  # a request sent again is the same pick
        assert all(r.sampling == expected[key] and r.verdict == sent[0].verdict for r in sent)
        assert sent[0].trajectory is not None and sent[0].trajectory.id == key[:-2]
    assert len(requests) - len(by_id) <= 20  # at most the batch in flight at the kill


async def test_a_trajectory_reader_that_stops_stops_the_pick_it_would_serve(
        settings: GatewaySettings) -> None:
    """The index's reader of the input topic fails (here its consumer stopped under it):
    asking it for a trajectory raises that failure at once, rather than waiting out
    ``trajectory_wait`` and sending the pick on without its trajectory, pick after pick."""
    from aiokafka.errors import ConsumerStoppedError

    from review.sampler import TrajectoryIndex
    from review.settings import ReviewSettings

    index = TrajectoryIndex(ReviewSettings(kafka_bootstrap=settings.kafka_bootstrap,
                                           input_topic=settings.input_topic))
    await index.start()
    try:
        assert index._consumer is not None
        await index._consumer.stop()
        started = time.monotonic()
        with pytest.raises(ConsumerStoppedError):
            await index.get("never-sent", wait=60)
        assert time.monotonic() - started < 30
    finally:
        await index.stop()
