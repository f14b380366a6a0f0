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


@contextmanager
def logging_restored() -> Iterator[None]:
    """Logging as it was once the block ends: the filters on the root logger's handlers
    (pytest's own among them, which live for the whole session: ``setup_logging``, run by
    a command invoked in process, puts a RepeatFilter on each) and the levels of the root
    and ``monitor_gateway`` loggers (``setup_logging`` sets the latter)."""
    root, ours = logging.getLogger(), logging.getLogger("monitor_gateway")
    filters = {handler: list(handler.filters) for handler in root.handlers}
    levels = {logger: logger.level for logger in (root, ours)}
    try:
        yield
    finally:
        for handler, kept in filters.items():
            handler.filters[:] = kept
        for logger, level in levels.items():
            logger.setLevel(level)
