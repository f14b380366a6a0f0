"""``calibrate --labels`` reads the production labels from the labels topic of the real
broker and writes the weighted threshold to the monitor config."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

import pytest
from kafka_io import Record, produce
from verdicts import labels_of, traffic

from monitor_gateway.config import load_config
from monitor_gateway.embedded import create_topics
from monitor_gateway.settings import GatewaySettings
from replay.calibrate import calibrate, label_rows
from review.sampling import Design

BUDGET = 0.05

pytestmark = pytest.mark.kafka


async def test_calibrate_on_the_labels_topic(settings: GatewaySettings, tmp_path: Path) -> None:
    topic = f"labels-{uuid.uuid4().hex[:8]}"
    await create_topics(settings, {topic: 2})
    labels = labels_of(traffic(4000, seed=3), Design(flagged=0.5, unflagged=0.05,
                                                     uncertainty=0.0))
    records: list[Record] = [(label.trajectory_id.encode(), label.model_dump_json().encode(), [])
               for label in labels]
    await produce(settings.kafka_bootstrap, topic, records + records[:50])  # some twice
    config = tmp_path / "monitor.toml"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "monitor_gateway", "calibrate", "--labels", "--bootstrap",
        settings.kafka_bootstrap, "--max-far", str(BUDGET), "--config", str(config),
        env={**os.environ, "MONITOR_GATEWAY_LABELS_TOPIC": topic, "COLUMNS": "120"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await process.communicate()
    assert process.returncode == 0, out.decode()
    written = load_config(str(config))
    expected = calibrate(label_rows(labels), BUDGET)
    assert written.thresholds == {name: point.threshold for name, point in expected.items()}
    assert written.calibration is not None
    assert written.calibration.benign["default"] == sum(
        label.decision == "benign" for label in labels)  # each label once
