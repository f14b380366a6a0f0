"""The review loop end to end on the real broker, without people: a benchmark replayed as
production traffic through a live gateway, the sampler, the scripted reviewer answering
from the benchmark's labels, and the production estimates on the review service's
/metrics, whose 95% intervals cover the replayed traffic's true MR and FAR."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import aiohttp
import pytest
from kafka_io import consume, running
from prometheus_client.parser import text_string_to_metric_families

from monitor_gateway.client import read_labels
from monitor_gateway.embedded import create_topics, free_port
from monitor_gateway.monitors import RulesMonitor
from monitor_gateway.schema import Verdict
from monitor_gateway.settings import GatewaySettings
from replay.builtin import build
from replay.dataset import write
from review.estimate import by_group, labelled
from review.sampling import Design, pick

pytestmark = pytest.mark.kafka


def command(settings: GatewaySettings, env: dict[str, str], *args: str
            ) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "monitor_gateway", *args],
        env={**os.environ, "MONITOR_GATEWAY_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
             "MONITOR_GATEWAY_INPUT_TOPIC": settings.input_topic,
             "MONITOR_GATEWAY_VERDICT_TOPIC": settings.verdict_topic, **env},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


Figures = list[tuple[str, dict[str, str], float]]


async def metrics(port: int) -> Figures:
    async with aiohttp.ClientSession() as http, \
            http.get(f"http://127.0.0.1:{port}/metrics") as response:
        text = await response.text()
    return [(sample.name, sample.labels, sample.value)
            for family in text_string_to_metric_families(text) for sample in family.samples
            if sample.name.startswith("monitor_gateway_production")]


def value(figures: Figures, name: str, **labels: str) -> float:
    [found] = [v for n, given, v in figures if n == name and labels.items() <= given.items()]
    return found


async def test_replayed_as_production_reviewed_by_script_the_intervals_cover_the_truth(
        settings: GatewaySettings, tmp_path: Path) -> None:
    run = uuid.uuid4().hex[:8]
    env = {"MONITOR_GATEWAY_REVIEW_TOPIC": f"review-{run}",
           "MONITOR_GATEWAY_LABELS_TOPIC": f"labels-{run}",
           "MONITOR_GATEWAY_SAMPLER_GROUP": f"sampler-{run}",
           "MONITOR_GATEWAY_SAMPLE_SEED": "loop-test"}
    await create_topics(settings, {env["MONITOR_GATEWAY_REVIEW_TOPIC"]: 2,
                                   env["MONITOR_GATEWAY_LABELS_TOPIC"]: 2})
    per_category = Counter[str]()
    subset = []
    for sample in build(split="test"):  # 100 pairs of each category
        if per_category[sample.category] < 200:
            per_category[sample.category] += 1
            subset.append(sample)
    dataset = tmp_path / "production.jsonl"
    write(subset, dataset)
    port = free_port()
    processes = []
    async with running(settings, RulesMonitor()):
        try:
            processes.append(command(settings, env, "review-sampler", "--sample-flagged", "0.6",
                                     "--sample-unflagged", "0.15"))
            processes.append(command(settings, env, "review", "--auto-from", str(dataset),
                                     "--port", str(port)))
            sent = command(settings, env, "replay", "--dataset", str(dataset),
                           "--as-production")
            out, _ = sent.communicate(timeout=120)
            assert sent.returncode == 0, out.decode()
            records = await consume(settings.kafka_bootstrap, settings.verdict_topic,
                                    len(subset))
            verdicts = [Verdict.model_validate_json(r.value) for r in records]
            assert len({v.trajectory_id for v in verdicts}) == len(subset)
            assert all(v.replay_run is None for v in verdicts)  # it passed for production
            design = Design(flagged=0.6, unflagged=0.15, seed="loop-test")
            picks = {v.trajectory_id for v in verdicts if pick(v, design) is not None}
            deadline, figures, counted = time.monotonic() + 120, [], 0.0
            while time.monotonic() < deadline:
                await asyncio.sleep(1)
                for process in processes:
                    assert process.poll() is None, process.communicate()[0].decode()[-2000:]
                try:
                    figures = await metrics(port)
                except aiohttp.ClientError:
                    continue
                counted = sum(v for n, labels, v in figures
                              if n == "monitor_gateway_production_labels"
                              and labels["category"] == "all")
                if counted == len(picks):
                    break
            assert counted == len(picks)
        finally:
            for process in processes:
                process.send_signal(signal.SIGTERM)
            for process in processes:
                process.wait(30)
    truth = {s.id: s.label == "misbehavior" for s in subset}
    flagged = {v.trajectory_id: v.flagged for v in verdicts}
    bad = [i for i, b in truth.items() if b]
    true_mr = sum(not flagged[i] for i in bad) / len(bad)
    true_far = sum(flagged[i] for i, b in truth.items() if not b) / (len(truth) - len(bad))
    version = verdicts[0].monitor.version

    def figure(name: str, bound: str) -> float:
        return value(figures, name, bound=bound, category="all", monitor_version=version)

    for name, truth_value in (("monitor_gateway_production_miss_rate", true_mr),
                              ("monitor_gateway_production_false_alarm_rate", true_far)):
        assert figure(name, "low") <= truth_value <= figure(name, "high"), (name, truth_value)
    labels = await read_labels(settings.model_copy(update={
        "labels_topic": env["MONITOR_GATEWAY_LABELS_TOPIC"]}))
    assert {label.trajectory_id for label in labels} == picks
    assert all(label.decision == ("misbehavior" if truth[label.trajectory_id] else "benign")
               for label in labels)
    mr, far = by_group([labelled(label) for label in labels])[(version, "all")]
    assert figure("monitor_gateway_production_miss_rate", "estimate") == pytest.approx(mr.value)
    assert figure("monitor_gateway_production_false_alarm_rate", "estimate") == pytest.approx(
        far.value)
