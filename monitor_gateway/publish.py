"""Publish verdicts and dead letters, and wait until the broker has them.

A plain aiokafka producer: the hot path's per-message cost matters (see
``benchmarks/throughput.py``), and the gateway needs only send-and-acknowledge.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, NamedTuple

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError, MessageSizeTooLargeError, RecordListTooLargeError

from .logs import Outage
from .settings import GatewaySettings

log = logging.getLogger(__name__)

BACKOFF_MAX = 5.0
# refusals that sending again cannot cure: the message must change
TOO_LARGE = (MessageSizeTooLargeError, RecordListTooLargeError)


class Outgoing(NamedTuple):
    topic: str
    value: bytes
    key: bytes | None
    headers: list[tuple[str, bytes]]
    # called once the broker has acknowledged the message (metrics)
    acknowledged: Callable[[], None] | None = None
    # the message to send instead if the broker refuses this one as too large (a verdict
    # cut to fit, then a dead letter); None: nothing smaller to send
    smaller: Callable[[], Outgoing | None] | None = None


class Publisher:
    def __init__(self, settings: GatewaySettings) -> None:
        self.max_bytes = settings.max_publish_bytes
        self._producer = AIOKafkaProducer(
            acks="all",
            # a full batch makes every sender to its partition wait for the drain: large
            # batches and a short linger keep thousands of concurrent publishes flowing
            max_batch_size=1024 * 1024,
            max_request_size=settings.max_publish_bytes,
            linger_ms=settings.linger_ms,
            **settings.client_args(),
        )
        self.outage = Outage("Kafka broker (publishing)", log)

    async def start(self) -> None:
        await self._producer.start()

    async def stop(self) -> None:
        await self._producer.stop()

    async def enqueue(self, message: Outgoing) -> asyncio.Future[Any]:
        """Queue the message for sending; the returned future resolves when the broker has
        acknowledged it. Waits (the backpressure of a full buffer) and retries while the
        producer cannot take it; a message too large to send raises at once."""
        attempt = 0
        while True:
            try:
                future: asyncio.Future[Any] = await self._producer.send(
                    message.topic, message.value, key=message.key, headers=message.headers)
                return future
            except TOO_LARGE:
                raise
            except KafkaError as exc:
                self.outage.failed(exc)
                attempt += 1
                await asyncio.sleep(self.backoff(attempt))

    @staticmethod
    def backoff(attempt: int = 0) -> float:
        return float(min(BACKOFF_MAX, 0.1 * 2.0**attempt))
