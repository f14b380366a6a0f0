"""Talking to the real broker in tests: a gateway running for a block, and plain aiokafka
clients on the other side (a producer, a group-less consumer, the group's committed
positions)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition

from monitor_gateway.gateway import Gateway
from monitor_gateway.monitors import Monitor
from monitor_gateway.settings import GatewaySettings
from monitor_gateway.tracing import Tracing


@asynccontextmanager
async def running(settings: GatewaySettings, monitor: Monitor,
                  tracing: Tracing | None = None) -> AsyncIterator[Gateway]:
    gateway = Gateway(settings, monitor, tracing=tracing)
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


Record = tuple[bytes, bytes | None, Sequence[tuple[str, bytes | None]]]  # key, value, headers


async def produce(bootstrap: str, topic: str, records: Sequence[Record]) -> None:
    """Plain aiokafka producer: (key, value, headers) each, acknowledged by the broker."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all",
                                max_request_size=4 * 1024 * 1024)
    await producer.start()
    try:
        futures = [await producer.send(topic, value, key=key, headers=headers)
                   for key, value, headers in records]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def consume(bootstrap: str, topic: str, count: int, timeout: float = 30.0,
                  until: float | None = None) -> list[ConsumerRecord[bytes, bytes]]:
    """Plain aiokafka consumer, no group: every record of ``topic`` from the start, until
    ``count`` arrived or ``timeout`` passed with none new."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                                enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    try:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            await consumer._client.force_metadata_update()
            partitions = consumer.partitions_for_topic(topic) or set()
        consumer.assign([TopicPartition(topic, p) for p in partitions])
        records: list[ConsumerRecord[bytes, bytes]] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(records) < count and loop.time() < deadline:
            batch = await consumer.getmany(timeout_ms=200)
            for part in batch.values():
                records.extend(part)
                deadline = loop.time() + timeout
        return records
    finally:
        await consumer.stop()


async def committed(bootstrap: str, group: str, topic: str) -> dict[int, int | None]:
    """The group's committed position per partition, as Kafka has it."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                                enable_auto_commit=False)
    await consumer.start()
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        return {p: await consumer.committed(TopicPartition(topic, p)) for p in sorted(partitions)}
    finally:
        await consumer.stop()


async def outcomes(settings: GatewaySettings, verdicts: int, letters: int
                   ) -> tuple[list[ConsumerRecord[bytes, bytes]],
                              list[ConsumerRecord[bytes, bytes]], dict[int, int | None]]:
    """The verdicts and dead letters expected, then, once the gateway has had time to
    commit, the group's committed positions."""
    got = await consume(settings.kafka_bootstrap, settings.verdict_topic, verdicts)
    dead = await consume(settings.kafka_bootstrap, settings.dlq_topic, letters)
    await asyncio.sleep(0.5)
    positions = await committed(settings.kafka_bootstrap, settings.group_id,
                                settings.input_topic)
    return got, dead, positions
