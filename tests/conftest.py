"""Fixtures: one real Kafka-protocol broker (the embedded tansu) for the whole session."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from loglines import logging_restored
from paths import pythonpath

from monitor_gateway.embedded import EmbeddedBroker, create_topics
from monitor_gateway.settings import GatewaySettings


@pytest.fixture(autouse=True)
def logging_as_it_was() -> Iterator[None]:
    """A command invoked in process that gets as far as its logging set-up leaves a
    RepeatFilter on pytest's handlers and the gateway's log level (``setup_logging``):
    undone after every test, so that no later test's log capture depends on the order."""
    with logging_restored():
        yield


@pytest.fixture(scope="session", autouse=True)
def children_import_this_checkout() -> Iterator[None]:
    """Every child process the tests start with this environment imports this checkout's
    code, wherever its working directory (:func:`paths.pythonpath`); the PYTHONPATH the
    tests were given follows it."""
    given = os.environ.get("PYTHONPATH")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", pythonpath() + (os.pathsep + given if given else ""))
        yield


@pytest.fixture(scope="session")
def kafka() -> Iterator[str]:
    with EmbeddedBroker() as broker:
        yield broker.bootstrap


@pytest.fixture
async def settings(kafka: str) -> GatewaySettings:
    """Fresh topics and group per test, so tests never see each other's records."""
    run = uuid.uuid4().hex[:8]
    s = GatewaySettings(
        kafka_bootstrap=kafka,
        input_topic=f"in-{run}", verdict_topic=f"verdicts-{run}", dlq_topic=f"dlq-{run}",
        group_id=f"gw-{run}", metrics_port=0, commit_interval=0.1,
        retry_backoff=0.01, monitor_timeout=1.0, shutdown_grace=1.0,
    )
    await create_topics(s, {s.input_topic: 4, s.verdict_topic: 2, s.dlq_topic: 1})
    return s
