"""Logs in an outage: repeated lines held back and counted, one line at each end."""

from __future__ import annotations

import logging

import pytest

from monitor_gateway.logs import Outage, RepeatFilter


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
