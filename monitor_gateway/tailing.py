"""What ``monitor-gateway tail`` shows: a line a verdict, and under a flagged one each
quote in the text around it, read from the input topic beside the verdicts."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque
from collections.abc import AsyncGenerator, AsyncIterator

from rich.console import Console
from rich.markup import escape

from .schema import DeadLetter, Trajectory, Verdict

CONTEXT_CHARS = 60  # shown each side of a quote
CONTEXT_CACHE = 10_000  # trajectories kept to show evidence in
CONTEXT_WAIT = 1.0  # seconds a flagged verdict waits for its trajectory to be read


def show(console: Console, message: Verdict | DeadLetter,
         trajectory: Trajectory | None = None) -> None:
    """One line a verdict; under a flagged one, each quote with where it is, in the text
    around it when the trajectory was seen."""
    if isinstance(message, DeadLetter):
        console.print(f"[magenta]dead letter[/magenta] {message.error} key={message.key} "
                      f"{message.topic}[{message.partition}]@{message.offset}: "
                      f"{escape(message.detail)}", highlight=False)
        return
    state = ("[red]ERROR[/red]" if message.status == "error" else
             "[bold red]FLAGGED[/bold red]" if message.flagged else "[green]ok[/green]")
    console.print(f"{message.decided_at:%H:%M:%S} {state} {escape(message.trajectory_id)} "
                  f"score {message.score:.2f} {message.category or '-'} "
                  f"by {escape(message.monitor.name)}"
                  + (f": {escape(message.error or '')}" if message.status == "error" else ""),
                  highlight=False)
    if not message.flagged:
        return
    texts = dict(trajectory.texts()) if trajectory is not None else {}
    # reverse video on a terminal; piped, where styles are dropped, the quote is «marked»
    opened, closed = ("[reverse]", "[/reverse]") if console.is_terminal else ("«", "»")
    for evidence in message.evidence:
        where = evidence.source or "?"
        shown = f"{opened}{escape(evidence.quote)}{closed}"
        if evidence.start is not None and evidence.end is not None:
            where += f" [{evidence.start}:{evidence.end}]"
            text = texts.get(evidence.source or "")
            if text is not None and text[evidence.start:evidence.end] == evidence.quote:
                before = text[max(0, evidence.start - CONTEXT_CHARS):evidence.start]
                after = text[evidence.end:evidence.end + CONTEXT_CHARS]
                shown = (("…" if evidence.start > CONTEXT_CHARS else "") + escape(_flat(before))
                         + f"{opened}{escape(_flat(evidence.quote))}{closed}"
                         + escape(_flat(after))
                         + ("…" if evidence.end + CONTEXT_CHARS < len(text) else ""))
        console.print(f"    {escape(where)}: {shown}", highlight=False)


def _flat(text: str) -> str:
    """Text on one terminal line: a newline shows as ⏎."""
    return text.replace("\r", "").replace("\n", "⏎")


async def in_context(messages: AsyncIterator[Verdict | DeadLetter | Trajectory],
                     wait: float = CONTEXT_WAIT,
                     ) -> AsyncGenerator[tuple[Verdict | DeadLetter, Trajectory | None]]:
    """Verdicts and dead letters in the order they came, each flagged verdict with its
    trajectory when that was read (it may come just after its verdict: a flagged verdict
    waits for it up to ``wait`` seconds, and those behind it wait their turn)."""
    queue: asyncio.Queue[Verdict | DeadLetter | Trajectory] = asyncio.Queue(1000)

    async def pump() -> None:
        async for message in messages:
            await queue.put(message)

    pumping = asyncio.create_task(pump())
    seen: OrderedDict[str, Trajectory] = OrderedDict()
    held: deque[tuple[float, Verdict | DeadLetter]] = deque()

    def paired(message: Verdict | DeadLetter) -> tuple[Verdict | DeadLetter, Trajectory | None]:
        return message, seen.get(message.trajectory_id) if isinstance(message, Verdict) else None

    try:
        while True:
            try:
                message = await asyncio.wait_for(queue.get(), 0.1)
            except TimeoutError:
                if pumping.done():
                    pumping.result()  # the consumer's error, e.g. an unreachable broker
                    for _, left in held:  # the stream ended: nothing more will come
                        yield paired(left)
                    return
            else:
                if isinstance(message, Trajectory):
                    seen[message.id] = message
                    if len(seen) > CONTEXT_CACHE:
                        seen.popitem(last=False)
                else:
                    held.append((time.monotonic(), message))
            while held:
                since, first = held[0]
                if (isinstance(first, Verdict) and first.flagged
                        and first.trajectory_id not in seen
                        and time.monotonic() - since < wait):
                    break
                held.popleft()
                yield paired(first)
    finally:
        pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumping
