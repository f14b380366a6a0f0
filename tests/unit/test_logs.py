"""Logs in an outage: repeated lines held back and counted, one line at each end, reminders
between, and the Kafka client's connection failures held back."""

from __future__ import annotations

import logging

import pytest
from aiokafka.errors import (
    KafkaConnectionError,
    NodeNotReadyError,
    RequestTimedOutError,
    UnknownTopicOrPartitionError,
)
from loglines import lines_of

from monitor_gateway.logs import ConnectionFailures, Outage, RepeatFilter


def record(msg: str, level: int = logging.ERROR, name: str = "aiokafka") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, None, None)


def test_repeats_are_held_back_and_counted() -> None:
    now = [0.0]
    repeat = RepeatFilter(interval=10.0, clock=lambda: now[0])
    passed = []
    for second in range(25):  # ninety a second, as in a broker outage
        now[0] = float(second)
        for _ in range(90):
            line = record("Unable connect to node with id %s")
            if repeat.filter(line):
                passed.append(line.getMessage() if not line.args else line.msg)
    assert len(passed) == 3  # at 0 s, 10 s and 20 s
    assert passed[1].endswith("[899 more like this in the last 10s]")
    assert repeat.filter(record("another message"))
    assert repeat.filter(record("Unable connect to node with id %s", level=logging.INFO))


def test_an_outage_is_one_line_when_it_starts_and_one_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [100.0]
    outage = Outage("Kafka broker", logging.getLogger("test"), clock=lambda: now[0])
    with caplog.at_level(logging.WARNING):
        outage.succeeded()
        for _ in range(340):
            outage.failed("connection refused")
        now[0] = 112.0
        outage.succeeded()
        outage.succeeded()
    assert [r.getMessage() for r in caplog.records] == [
        "Kafka broker failing (connection refused); retrying",
        "Kafka broker working again after 12.0s (340 failed attempts)",
    ]


def test_a_long_outage_is_reminded_and_its_end_is_info() -> None:
    now = [0.0]
    outage = Outage("Kafka broker", logging.getLogger("test.reminders"), clock=lambda: now[0],
                    remind=60.0, recovered=logging.INFO)
    with lines_of("test.reminders") as lines:
        for second in range(0, 150, 2):  # a check every 2 s for 150 s
            now[0] = float(second)
            outage.held_back()
            outage.failed("unreachable")
        now[0] = 150.0
        outage.succeeded()
    assert lines.lines == [
        (logging.WARNING, "Kafka broker failing (unreachable); retrying"),
        (logging.WARNING, "Kafka broker still failing after 60s (30 failed attempts, "
                          "31 client error lines held back; unreachable); retrying"),
        (logging.WARNING, "Kafka broker still failing after 120s (60 failed attempts, "
                          "61 client error lines held back; unreachable); retrying"),
        (logging.INFO, "Kafka broker working again after 150.0s (75 failed attempts, "
                       "75 client error lines held back)"),
    ]


def test_lines_held_back_outside_an_outage_are_not_counted_in_the_next() -> None:
    now = [0.0]
    outage = Outage("Kafka broker", logging.getLogger("test"), clock=lambda: now[0])
    outage.held_back()
    outage.succeeded()  # a blip the checks never saw fail
    assert outage.held == 0


@pytest.mark.parametrize(("name", "msg", "args"), [
    ("aiokafka", "Unable connect to node with id %s: %s", (1, OSError(111, "refused"))),
    ("aiokafka", "Unable to update metadata from %s", ([1],)),
    ("aiokafka", 'Unable connect to "%s:%s": %s', ("h", 9092, TimeoutError())),
    ("aiokafka.consumer.fetcher", "Failed fetch messages from %s: %s",
     (1, NodeNotReadyError("node 1"))),
    ("aiokafka.consumer.group_coordinator", "Group Coordinator Request failed: %s",
     (NodeNotReadyError("node 1"),)),
    ("aiokafka.consumer.group_coordinator", "Heartbeat send request failed: %s. Will retry.",
     (KafkaConnectionError("closed"),)),
    ("aiokafka.consumer.group_coordinator",
     "Marking the coordinator dead (node %s)for group %s.", (1, "g")),
    ("aiokafka.producer.sender", "Cannot send %r to %s: %r",
     (object, 1, RequestTimedOutError())),
])
def test_the_kafka_clients_connection_failures_are_held_back(
    name: str, msg: str, args: tuple[object, ...],
) -> None:
    held: list[None] = []
    quiet = ConnectionFailures(lambda: held.append(None))
    line = logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, None)
    assert not quiet.filter(line)
    assert len(held) == 1


@pytest.mark.parametrize(("name", "msg", "args"), [
    ("aiokafka.cluster", "Topic %s not found in cluster metadata", ("t",)),
    ("aiokafka.consumer.fetcher", "Failed fetch messages from %s: %s",
     (1, UnknownTopicOrPartitionError())),
    ("aiokafka.consumer.group_coordinator",
     "Heartbeat session expired - marking coordinator dead", None),
    ("aiokafka.consumer.consumer", "error in consumer iterator: %s", None),
    ("monitor_gateway.publish", "publishing failing (%s); retrying",
     (KafkaConnectionError("closed"),)),  # the gateway's own lines are never held back
])
def test_every_other_line_passes(name: str, msg: str, args: tuple[object, ...] | None) -> None:
    held: list[None] = []
    quiet = ConnectionFailures(lambda: held.append(None))
    assert quiet.filter(logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, None))
    assert held == []


def test_installed_on_aiokafkas_own_loggers_it_holds_their_lines_back() -> None:
    held: list[None] = []
    quiet = ConnectionFailures(lambda: held.append(None))
    client, fetcher = logging.getLogger("aiokafka"), logging.getLogger("aiokafka.consumer.fetcher")
    quiet.install()
    try:
        with lines_of("aiokafka") as lines:  # where the fetcher's lines pass too
            client.error("Unable to update metadata from %s", [1])
            fetcher.error("Failed fetch messages from %s: %s", 1, NodeNotReadyError("1"))
            fetcher.error("Failed fetch messages from %s: %s", 1,
                          UnknownTopicOrPartitionError())
    finally:
        quiet.remove()
    assert lines.lines == [
        (logging.ERROR, "Failed fetch messages from 1: [Error 3] UnknownTopicOrPartitionError")]
    assert len(held) == 2
    assert quiet not in fetcher.filters
