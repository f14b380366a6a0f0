"""The review service keeps nothing but what is on its topics: SIGKILLed while the
scripted reviewer labels and started again, it labels what is left, counts each label
once and its estimates are those of the labels on the topic."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import aiohttp
import pytest
from kafka_io import Record, consume, produce
from prometheus_client.parser import text_string_to_metric_families
from verdicts import verdict

from monitor_gateway.client import read_labels
from monitor_gateway.embedded import create_topics, free_port
from monitor_gateway.schema import ReviewRequest, Sampling, Trajectory, utcnow
from monitor_gateway.settings import GatewaySettings
from replay.dataset import Sample, write
from review.estimate import false_alarm_rate, labelled, miss_rate

pytestmark = pytest.mark.kafka


def start(settings: GatewaySettings, dataset: Path, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "monitor_gateway", "review", "--auto-from", str(dataset),
         "--port", str(port)],
        env={**os.environ, "MONITOR_GATEWAY_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
             "MONITOR_GATEWAY_REVIEW_TOPIC": settings.review_topic,
             "MONITOR_GATEWAY_LABELS_TOPIC": settings.labels_topic},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wave(samples: list[Sample]) -> list[Record]:
    out: list[Record] = []
    for sample in samples:
        i = int(sample.id[1:])
        wrong = i // 2 % 4 == 0  # a quarter of each kind
        score = 0.8 if (sample.label == "misbehavior") != wrong else 0.2
        request = ReviewRequest(
            id=f"{sample.id}@1", verdict=verdict(sample.id, score),
            trajectory=Trajectory.model_validate(sample.trajectory()),
            sampling=Sampling(probability=0.5 if score >= 0.5 else 0.1, stratum="s",
                              reason="stratified"), requested_at=utcnow())
        out.append((sample.id.encode(), request.model_dump_json().encode(), []))
    return out


async def production_figures(port: int) -> dict[str, float]:
    async with aiohttp.ClientSession() as http, \
            http.get(f"http://127.0.0.1:{port}/metrics") as response:
        text = await response.text()
    return {f"{s.name}:{s.labels.get('bound', s.labels.get('decision'))}": s.value
            for family in text_string_to_metric_families(text) for s in family.samples
            if s.name.startswith("monitor_gateway_production") and s.labels["category"] == "all"}


async def test_a_sigkilled_review_service_loses_and_double_counts_nothing(
        settings: GatewaySettings, tmp_path: Path) -> None:
    run = uuid.uuid4().hex[:8]
    settings = settings.model_copy(update={"review_topic": f"review-{run}",
                                           "labels_topic": f"labels-{run}"})
    await create_topics(settings, {settings.review_topic: 2, settings.labels_topic: 2})
    samples = [Sample(id=f"s{i}", pair_id=f"p{i // 2}",
                      label="misbehavior" if i % 2 else "benign",
                      category="sycophancy_bias", request="Is it right?",
                      response=f"Yes, you are right {i}.") for i in range(200)]
    dataset = tmp_path / "truth.jsonl"
    write(samples, dataset)
    await produce(settings.kafka_bootstrap, settings.review_topic, wave(samples[:100]))
    port = free_port()
    service = start(settings, dataset, port)
    try:
        assert await consume(settings.kafka_bootstrap, settings.labels_topic, 1, timeout=60)
        service.send_signal(signal.SIGKILL)
        service.wait()
        await produce(settings.kafka_bootstrap, settings.review_topic, wave(samples[100:]))
        service = start(settings, dataset, port)
        deadline, figures = time.monotonic() + 90, {}
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            try:
                figures = await production_figures(port)
            except aiohttp.ClientError:
                continue
            if sum(v for k, v in figures.items() if "labels" in k) == len(samples):
                break
    finally:
        service.terminate()
        service.wait(30)
    counted = {k: v for k, v in figures.items() if "labels" in k}
    assert counted == {"monitor_gateway_production_labels:benign": 100,
                       "monitor_gateway_production_labels:misbehavior": 100}
    labels = await read_labels(settings)
    assert sorted(label.trajectory_id for label in labels) == sorted(s.id for s in samples)
    items = [labelled(label) for label in labels]
    mr, far = miss_rate(items), false_alarm_rate(items)
    assert figures["monitor_gateway_production_miss_rate:estimate"] == pytest.approx(mr.value)
    assert figures["monitor_gateway_production_false_alarm_rate:high"] == pytest.approx(far.high)
    # a quarter of each kind judged wrong, the wrong ones flagged at 0.5 or unflagged at 0.1
    assert mr.value == pytest.approx((25 / 0.1) / (25 / 0.1 + 75 / 0.5))
