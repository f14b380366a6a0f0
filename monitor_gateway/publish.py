"""Publish verdicts and dead letters, and wait until the broker has them.

A plain aiokafka producer: the hot path's per-message cost matters (see
``benchmarks/throughput.py``), and the gateway needs only send-and-acknowledge.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, NamedTuple

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from .settings import GatewaySettings

log = logging.getLogger(__name__)

BACKOFF_MAX = 5.0


class Outgoing(NamedTuple):
    topic: str
    value: bytes
    key: bytes | None
    headers: list[tuple[str, bytes]]


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

    async def enqueue(self, message: Outgoing) -> asyncio.Future[Any]:
        """Queue the message for sending; the returned future resolves when the broker has
        acknowledged it. Waits (the backpressure of a full buffer) and retries while the
        producer cannot take it."""
        attempt = 0
        while True:
            try:
                future: asyncio.Future[Any] = await self._producer.send(
                    message.topic, message.value, key=message.key, headers=message.headers)
                return future
            except KafkaError as exc:
                delay = self.backoff(attempt)
                log.warning("cannot queue for %s (%s); retrying in %.1fs", message.topic, exc,
                            delay)
                attempt += 1
                await asyncio.sleep(delay)

    @staticmethod
    def backoff(attempt: int = 0) -> float:
        return float(min(BACKOFF_MAX, 0.1 * 2.0**attempt))
