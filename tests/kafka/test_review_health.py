"""The review page's ``/health``, asked of ``monitor-gateway review`` as a process: 204
while it can do its work; 503 with the reason in one line when its broker stops answering,
or when the sampler of ``review --sampler`` stops (logged, not silent)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid

import aiohttp
import pytest
from paths import ROOT

from monitor_gateway.embedded import EmbeddedBroker, create_topics, free_port
from monitor_gateway.settings import GatewaySettings

pytestmark = pytest.mark.kafka


def start_review(settings: GatewaySettings, *args: str, **env: str
                 ) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "monitor_gateway", "review", "--port", str(port), *args],
        env={**os.environ, "PYTHONPATH": str(ROOT),  # this checkout's code
             "MONITOR_GATEWAY_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
             "MONITOR_GATEWAY_REVIEW_TOPIC": settings.review_topic,
             "MONITOR_GATEWAY_LABELS_TOPIC": settings.labels_topic,
             "MONITOR_GATEWAY_REVIEW_TOKEN": "t", **env},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return process, f"http://127.0.0.1:{port}/health"


async def health_until(process: subprocess.Popen[bytes], url: str, status: int,
                       timeout: float = 60.0) -> str:
    """The body of the first answer of ``/health`` with ``status``."""
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()[0].decode()
            try:
                async with http.get(url) as response:
                    if response.status == status:
                        return await response.text()
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise AssertionError(f"/health never answered {status}")


async def answer(url: str) -> tuple[int, str]:
    """``url``'s status and body, asked once."""
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


def stopped(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    """SIGTERM, then the exit code and everything the process printed."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        output = process.communicate(timeout=30)[0].decode()
    except subprocess.TimeoutExpired:
        process.kill()
        output = process.communicate()[0].decode()
    return process.returncode, output


def review_topics(settings: GatewaySettings) -> GatewaySettings:
    run = uuid.uuid4().hex[:8]
    return settings.model_copy(update={"review_topic": f"review-{run}",
                                       "labels_topic": f"labels-{run}"})


async def test_health_is_204_while_the_broker_answers_and_503_with_why_when_it_stops(
    settings: GatewaySettings,
) -> None:
    own = EmbeddedBroker().start()
    settings = review_topics(settings.model_copy(update={"kafka_bootstrap": own.bootstrap}))
    process = None
    try:
        await create_topics(settings, {settings.review_topic: 1, settings.labels_topic: 1})
        process, url = start_review(settings)
        assert await health_until(process, url, 204) == ""
        own.stop()
        reason = await health_until(process, url, 503)
        assert reason == f"no Kafka broker at {own.bootstrap} answered within 2 s\n"
        # not ready, yet alive: the page reconnects by itself, a restart mends nothing
        assert await answer(url.replace("/health", "/live")) == (204, "")
    finally:
        own.stop()
        if process is not None:
            code, output = stopped(process)
    assert code == 0, output


async def test_a_sampler_that_stops_is_logged_and_fails_health(
    settings: GatewaySettings,
) -> None:
    """``review --sampler`` with an input topic that is not there: the sampler cannot read
    the trajectories it would attach, and stops; the page says so instead of serving on as
    if it sampled."""
    settings = review_topics(settings)
    await create_topics(settings, {settings.review_topic: 1, settings.labels_topic: 1})
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    process, url = start_review(settings, "--sampler",
                                MONITOR_GATEWAY_VERDICT_TOPIC=settings.verdict_topic,
                                MONITOR_GATEWAY_INPUT_TOPIC=missing)
    try:
        reason = await health_until(process, url, 503)
        live = await answer(url.replace("/health", "/live"))  # only a restart mends it
    finally:
        code, output = stopped(process)
    assert reason == (f"the review sampler stopped: no topic {missing} on "
                      f"{settings.kafka_bootstrap}\n")
    assert live == (503, reason)
    assert code == 0, output
    assert "the review sampler stopped; /health and /live answer 503 from now on" in output
    assert "TopicMissing" in output  # with its traceback
