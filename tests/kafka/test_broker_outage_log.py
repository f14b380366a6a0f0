"""The log in a Kafka broker outage: a broker process of the test's own is stopped under a
running gateway and started again on the same port. The log shows one line when it goes
(naming the bootstrap servers), reminders while it is gone, one line when it is back, and
none of the Kafka client's own per-attempt connection errors; ``/health`` and the
``broker_available`` gauge follow it. Once in process, once as ``monitor-gateway serve``
reading its stderr."""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import signal
import time

import aiohttp
import pytest
from kafka_io import running
from loglines import lines_of
from prometheus_client import CollectorRegistry
from test_process import serve, wait_healthy

from monitor_gateway.embedded import EmbeddedBroker, create_topics
from monitor_gateway.monitors import RulesMonitor
from monitor_gateway.settings import GatewaySettings

pytestmark = pytest.mark.kafka

# what aiokafka says, every ~2 s a client, about a broker it cannot reach
CLIENT_LINES = ("Unable connect", "Unable to update metadata", "NodeNotReadyError",
                "KafkaConnectionError", "Connection refused", "Marking the coordinator dead")


async def available(registry: CollectorRegistry, value: float, timeout: float) -> None:
    """Wait for ``monitor_gateway_broker_available`` to show ``value``."""
    deadline = time.monotonic() + timeout
    while registry.get_sample_value("monitor_gateway_broker_available") != value:
        assert time.monotonic() < deadline, f"broker_available never became {value}"
        await asyncio.sleep(0.2)


async def scraped(port: int, line: str, timeout: float = 10.0) -> None:
    """Wait for ``/metrics`` to show ``line``."""
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            async with http.get(f"http://127.0.0.1:{port}/metrics") as response:
                if line in (await response.text()).splitlines():
                    return
            assert time.monotonic() < deadline, f"/metrics never showed {line}"
            await asyncio.sleep(0.2)


async def test_a_broker_outage_is_three_kinds_of_line_not_a_flood(
    settings: GatewaySettings,
) -> None:
    own = EmbeddedBroker().start()
    settings = settings.model_copy(update={"kafka_bootstrap": own.bootstrap,
                                           "broker_reminder": 3.0})
    topics = {settings.input_topic: 2, settings.verdict_topic: 1, settings.dlq_topic: 1}
    try:
        await create_topics(settings, topics)
        async with running(settings, RulesMonitor()) as gateway:
            healthy_before = await gateway.healthy()
            with lines_of() as log:
                own.stop()
                await available(gateway.registry, 0, timeout=10)
                healthy_meanwhile = await gateway.healthy()
                await asyncio.sleep(8.0)  # aiokafka logs its errors every ~2 s meanwhile
                own = EmbeddedBroker(port=own.port).start()  # memory only: the topics again
                await create_topics(settings, topics)
                await available(gateway.registry, 1, timeout=30)
                healthy_after = await gateway.healthy()
                held = gateway.registry.get_sample_value(
                    "monitor_gateway_kafka_client_errors_held_total")
            lines = [(r.levelno, r.name, r.getMessage()) for r in log.records]
    finally:
        own.stop()

    client = [m for level, name, m in lines if name.startswith("aiokafka")
              and any(part in m for part in CLIENT_LINES)]
    assert client == []  # without the filter: hundreds (each client, every ~2 s)
    gateway_lines = [(level, message) for level, name, message in lines
                     if name == "monitor_gateway.gateway"]
    what = f"Kafka broker connection (bootstrap {own.bootstrap})"
    went = [m for level, m in gateway_lines if m.startswith(f"{what} failing (unreachable")]
    reminders = [m for level, m in gateway_lines if m.startswith(f"{what} still failing after")]
    back = [(level, m) for level, m in gateway_lines if m.startswith(f"{what} working again")]
    assert len(went) == 1 and went[0].endswith("; retrying"), gateway_lines
    # an outage of 9 s or more, BROKER_REMINDER=3: reminders, never more often than that
    after = [int(n) for m in reminders for n in re.findall(r"still failing after (\d+)s", m)]
    assert len(after) >= 2, gateway_lines
    assert all(later - earlier >= 3 for earlier, later in itertools.pairwise([0, *after]))
    assert len(back) == 1 and back[0][0] == logging.INFO, gateway_lines
    assert "client error lines held back" in back[0][1]
    assert held is not None and held > 0
    assert healthy_before and not healthy_meanwhile and healthy_after


async def test_serves_log_shows_the_outage_and_not_the_clients_errors(
    settings: GatewaySettings, capfd: pytest.CaptureFixture[str],
) -> None:
    own = EmbeddedBroker().start()
    settings = settings.model_copy(update={"kafka_bootstrap": own.bootstrap})
    topics = {settings.input_topic: 2, settings.verdict_topic: 1, settings.dlq_topic: 1}
    process = None
    try:
        await create_topics(settings, topics)
        process, port = serve(settings, MONITOR_GATEWAY_MONITOR="rules")
        await wait_healthy(port)
        capfd.readouterr()
        own.stop()
        await scraped(port, "monitor_gateway_broker_available 0.0")
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/health") as response:
                health = response.status
            async with http.get(f"http://127.0.0.1:{port}/live") as response:
                live = response.status
        await asyncio.sleep(6.0)
        own = EmbeddedBroker(port=own.port).start()
        await create_topics(settings, topics)
        await scraped(port, "monitor_gateway_broker_available 1.0", timeout=30)
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        own.stop()

    log = capfd.readouterr().err.splitlines()
    what = f"Kafka broker connection (bootstrap {own.bootstrap})"
    assert [line for line in log if " aiokafka" in line
            and any(part in line for part in CLIENT_LINES)] == []
    gone = [line for line in log if f"WARNING monitor_gateway.gateway: {what} failing" in line]
    back = [line for line in log if f"INFO monitor_gateway.gateway: {what} working again" in line]
    assert len(gone) == 1 and len(back) == 1, log
    assert health == 503  # not ready
    assert live == 204  # yet alive: it reconnects by itself, a restart would mend nothing
