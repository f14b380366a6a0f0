"""What a fetch costs the embedded broker as its log grows: why the soak's broker CPU climbs.

The embedded tansu (0.6.0, memory storage) keeps every produced batch as one object and,
for each fetch of a partition with new records, lists all of that partition's objects to
find where the fetch starts. So a fetch costs in proportion to the batches the partition
has ever received, not to the records it returns. This fills one partition with records
sent one to a batch, and another with the same records about 120 to a batch, and at each
step (0, 10,000, 20,000 records held) reads each partition for a while as a consumer at
the end does: one 2 KB record produced every 50 ms, fetched with a 50 ms wait. It prints
the broker's CPU (a share of a core) in each window, and as a ratio to the empty log's.

    python benchmarks/broker_fetch.py [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

import uvloop
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from processes import tree

from monitor_gateway.embedded import EmbeddedBroker, create_topics
from monitor_gateway.settings import KafkaSettings

RECORD = b"x" * 2000
STEP = 10_000
STEPS = 2


def broker_cpu() -> float:
    """CPU seconds so far of the broker this process started."""
    return sum(cpu for name, (_, cpu) in tree(os.getpid(), "run").items() if "broker" in name)


async def read_at_end(bootstrap: str, topic: str, producer: AIOKafkaProducer,
                      seconds: float) -> tuple[float, int]:
    """The broker's share of a core while a consumer at the end reads what arrives."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None,
                                auto_offset_reset="latest", fetch_max_wait_ms=50)
    await consumer.start()
    try:
        await consumer.getmany(timeout_ms=500)  # positioned at the end
        read, started, before = 0, time.monotonic(), broker_cpu()

        async def feed() -> None:
            while time.monotonic() - started < seconds:
                await producer.send_and_wait(topic, RECORD)
                await asyncio.sleep(0.05)

        feeder = asyncio.create_task(feed())
        while time.monotonic() - started < seconds:
            read += sum(map(len, (await consumer.getmany(timeout_ms=200)).values()))
        await feeder
        return (broker_cpu() - before) / (time.monotonic() - started), read
    finally:
        await consumer.stop()


async def main(bootstrap: str, seconds: float) -> None:
    topics = {"a-batch-each": 1, "batched": 1}
    await create_topics(KafkaSettings(kafka_bootstrap=bootstrap), topics)
    single = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    batched = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=100,
                               max_batch_size=256 * 1024)
    await single.start()
    await batched.start()
    empty: dict[str, float] = {}
    try:
        for step in range(STEPS + 1):
            if step:
                for _ in range(STEP):  # one at a time: a batch each
                    await single.send_and_wait("a-batch-each", RECORD)
                await asyncio.gather(*[await batched.send("batched", RECORD)
                                       for _ in range(STEP)])
            for topic in topics:
                cores, read = await read_at_end(bootstrap, topic, single, seconds)
                empty.setdefault(topic, cores)
                print(f"{topic:>12}, {step * STEP:6d} records held: broker CPU {cores:.3f} "
                      f"cores, {cores / empty[topic]:.1f} times the empty log's "
                      f"({read} records read); machine load {os.getloadavg()[0]:.1f}",
                      flush=True)
    finally:
        await single.stop()
        await batched.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="how long each partition is read at each step")
    args = parser.parse_args()
    with EmbeddedBroker() as broker:
        uvloop.run(main(broker.bootstrap, args.seconds))
