"""Where verdicts land: the publisher's partitioner must agree with every Kafka client's."""

from __future__ import annotations

import random

import pytest
from aiokafka.partitioner import DefaultPartitioner, murmur2

from monitor_gateway.publish import murmur2 as fast_murmur2
from monitor_gateway.publish import partition


@pytest.mark.parametrize(("key", "expected"), [
    # the Java client's partitions for these keys over 1,000 partitions
    (b"", 681), (b"a", 524), (b"ab", 434), (b"abc", 107), (b"123456789", 566),
    (b"\x00 ", 742)])
def test_keys_land_where_the_java_client_puts_them(key: bytes, expected: int) -> None:
    partitions = list(range(1000))
    assert partition(key, partitions, partitions) == expected


def test_murmur2_matches_aiokafkas_on_every_length_and_byte() -> None:
    rng = random.Random(7)
    keys = [rng.randbytes(n) for n in range(70) for _ in range(30)]
    keys += [b"\xff" * n for n in range(9)] + [f"rl-dev-{i:04d}-{c}".encode()
                                                 for i in range(200) for c in range(3)]
    for key in keys:
        assert fast_murmur2(key) == murmur2(key), key
        assert partition(key, [0, 1, 2, 3, 4], [0, 1]) == DefaultPartitioner()(
            key, [0, 1, 2, 3, 4], [0, 1])


def test_unkeyed_messages_go_to_an_available_partition() -> None:
    assert {partition(None, [0, 1, 2], [2]) for _ in range(20)} == {2}
    assert {partition(None, [0, 1, 2], []) for _ in range(200)} == {0, 1, 2}
