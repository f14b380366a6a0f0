"""The lines a logger writes, read on a handler of the test's own: pytest's own handlers
(``caplog``) live for the whole session, and a test that ran ``serve``'s logging set-up in
process has left a :class:`~monitor_gateway.logs.RepeatFilter` on them, which holds back
a line whose template was logged in the last 10 s."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    @property
    def lines(self) -> list[tuple[int, str]]:
        return [(r.levelno, r.getMessage()) for r in self.records]


@contextmanager
def lines_of(name: str = "", level: int = logging.INFO) -> Iterator[Lines]:
    """The lines of logger ``name`` (the root: every logger's) at ``level`` and above while
    the block runs."""
    logger, lines = logging.getLogger(name), Lines()
    before = logger.level
    logger.setLevel(level)
    logger.addHandler(lines)
    try:
        yield lines
    finally:
        logger.removeHandler(lines)
        logger.setLevel(before)
