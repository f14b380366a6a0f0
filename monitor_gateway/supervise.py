"""Background loops that come back: a loop that dies is logged with its traceback, counted,
and restarted after a pause, and the gateway reports itself unhealthy until it runs again.
A commit loop that died silently would leave ``/health`` at 204 while nothing is committed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Supervisor:
    def __init__(self, restart_after: float = 1.0,
                 on_death: Callable[[str], None] | None = None) -> None:
        self.restart_after = restart_after
        self._on_death = on_death
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._down: set[str] = set()

    def start(self, name: str, loop: Callable[[], Awaitable[None]]) -> None:
        """Run ``loop()`` until stopped, restarting it whenever it raises or returns."""
        self._tasks[name] = asyncio.create_task(self._keep(name, loop), name=name)

    def healthy(self) -> bool:
        return not self._down

    async def stop(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()

    async def _keep(self, name: str, loop: Callable[[], Awaitable[None]]) -> None:
        while True:
            try:
                await loop()
                log.error("background loop %s returned; restarting it in %gs", name,
                          self.restart_after)
            except Exception:
                log.exception("background loop %s died; restarting it in %gs", name,
                              self.restart_after)
            self._down.add(name)
            if self._on_death is not None:
                self._on_death(name)
            await asyncio.sleep(self.restart_after)
            self._down.discard(name)
