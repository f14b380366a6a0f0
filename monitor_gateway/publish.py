"""Publish verdicts and dead letters, and wait until the broker has them.

A plain aiokafka producer: the hot path's per-message cost matters (see
``benchmarks/throughput.py``), and the gateway needs only send-and-acknowledge.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from .settings import GatewaySettings

log = logging.getLogger(__name__)

BACKOFF_MAX = 5.0
Headers = list[tuple[str, bytes]]


class Publisher:
    def __init__(self, settings: GatewaySettings) -> None:
        self._producer = AIOKafkaProducer(
            acks="all",
            # a full batch makes every sender to its partition wait for the drain: large
            # batches and a short linger keep thousands of concurrent publishes flowing
            max_batch_size=1024 * 1024,
            max_request_size=8 * 1024 * 1024,
            linger_ms=settings.linger_ms,
            **settings.client_args(),
        )

    async def start(self) -> None:
        await self._producer.start()

    async def stop(self) -> None:
        await self._producer.stop()

    async def send(self, topic: str, value: bytes, *, key: bytes | None,
                   headers: Headers) -> None:
        """Retry until acknowledged: an unacknowledged record's input offset is never
        committed, so giving up here would lose it."""
        attempt = 0
        while True:
            try:
                delivery = await self._producer.send(topic, value, key=key, headers=headers)
                await delivery
                return
            except KafkaError as exc:
                delay = min(BACKOFF_MAX, 0.1 * 2**attempt)
                log.warning("publish to %s failed (%s); retrying in %.1fs", topic, exc, delay)
                attempt += 1
                await asyncio.sleep(delay)
