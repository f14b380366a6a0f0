"""The review layer's commands: ``review-sampler`` and ``review``. They join the service's
``monitor-gateway`` command through the ``monitor_gateway.commands`` entry point (the
service never imports this layer)."""

from __future__ import annotations

import asyncio
import secrets
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from monitor_gateway.cli import Bootstrap, LogLevel, console, fail, run, setup_logging
from monitor_gateway.client import TopicMissing
from monitor_gateway.settings import SettingsError, load_settings
from replay.dataset import DatasetError, Sample
from replay.sources import resolve

from .settings import ReviewSettings

# seconds the page's tasks get to end on SIGTERM before they are cancelled: the sampler's
# batch may wait TRAJECTORY_WAIT for each pick's trajectory; cancelled, its offsets stay
# uncommitted and the next start picks the same verdicts again (review/sampler.py)
STOP_WAIT = 10.0


def register(app: typer.Typer) -> None:
    """Entry point ``monitor_gateway.commands``: add this layer's commands to ``app``."""
    app.command("review-sampler")(review_sampler)
    app.command("review")(review)


def _settings(overrides: dict[str, Any]) -> ReviewSettings:
    try:
        settings = load_settings(ReviewSettings, overrides)
        settings.design()  # a bad rate fails here, in one line
    except (SettingsError, ValueError) as exc:
        raise fail(str(exc)) from None
    return settings


async def _until_signalled(work: Callable[[asyncio.Event], Awaitable[None]],
                           settings: ReviewSettings) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, stop.set)
    try:
        await work(stop)
    except TopicMissing as exc:
        raise fail(f"{exc}: create it, or set the topic's flag") from None
    except OSError:
        raise fail(settings.unreachable()) from None


def review_sampler(
    bootstrap: Bootstrap = None,
    verdict_topic: Annotated[str | None, typer.Option(help="the verdicts to sample")] = None,
    input_topic: Annotated[str | None, typer.Option(
        help="where the judged trajectories are read from")] = None,
    review_topic: Annotated[str | None, typer.Option(
        help="where review requests go [env MONITOR_GATEWAY_REVIEW_TOPIC]")] = None,
    sample_flagged: Annotated[float | None, typer.Option(
        help="probability a flagged verdict is reviewed, default 0.5")] = None,
    sample_unflagged: Annotated[float | None, typer.Option(
        help="probability an unflagged verdict is reviewed, default 0.05")] = None,
    log_level: LogLevel = "INFO",
) -> None:
    """Pick verdicts for review, each with a known probability, as its own consumer group;
    runs until SIGTERM or Ctrl-C."""
    from .sampler import Sampler

    setup_logging(log_level)
    settings = _settings({"kafka_bootstrap": bootstrap, "verdict_topic": verdict_topic,
                          "input_topic": input_topic, "review_topic": review_topic,
                          "sample_flagged": sample_flagged,
                          "sample_unflagged": sample_unflagged})
    run(_until_signalled(Sampler(settings).run, settings))


def review(
    bootstrap: Bootstrap = None,
    host: Annotated[str | None, typer.Option(help="[env MONITOR_GATEWAY_REVIEW_HOST]")] = None,
    port: Annotated[int | None, typer.Option(help="[env MONITOR_GATEWAY_REVIEW_PORT]")] = None,
    token: Annotated[str | None, typer.Option(
        help="the token reviewers log in with [env MONITOR_GATEWAY_REVIEW_TOKEN]")] = None,
    auto_from: Annotated[str | None, typer.Option(
        help="answer requests from this benchmark file's labels (a scripted reviewer; also "
             "'realistic' or 'synthetic')")] = None,
    sampler: Annotated[bool, typer.Option(help="run the sampler in this process too")] = False,
    log_level: LogLevel = "INFO",
) -> None:
    """The review page and the production MR/FAR estimates on /metrics."""
    try:
        import uvicorn

        from .web import ReviewApp
    except ImportError:
        raise fail("the review page needs the review extra: "
                   "pip install 'monitor-gateway[review]'") from None
    from .auto import review_from
    from .health import Health
    from .queue import ReviewQueue
    from .sampler import Sampler

    setup_logging(log_level)
    settings = _settings({"kafka_bootstrap": bootstrap, "review_host": host,
                          "review_port": port, "review_token": token})
    secret = settings.review_token.get_secret_value() if settings.review_token else None
    if auto_from is None and not secret:
        raise fail("the review page needs a token for reviewers to log in with: set --token "
                   "or MONITOR_GATEWAY_REVIEW_TOKEN")
    samples: dict[str, Sample] = {}
    if auto_from is not None:
        try:
            samples = {s.id: s for s in resolve(auto_from)}
        except DatasetError as exc:
            raise fail(str(exc)) from None

    async def serve(stop: asyncio.Event) -> None:
        queue = ReviewQueue(settings)
        await queue.start()
        health = Health(queue)
        web = ReviewApp(queue, secret or secrets.token_urlsafe(32), health)
        server = uvicorn.Server(uvicorn.Config(web.app(), host=settings.review_host,
                                               port=settings.review_port, log_level="warning"))
        tasks = [asyncio.create_task(server.serve())]
        if auto_from is not None:
            reviewer = f"auto:{Path(auto_from).name}"
            tasks.append(asyncio.create_task(review_from(queue, samples, reviewer, stop)))
            health.watch("scripted reviewer", tasks[-1])
        if sampler:
            tasks.append(asyncio.create_task(Sampler(settings).run(stop)))
            health.watch("review sampler", tasks[-1])
        console.print(f"review page on http://{settings.review_host}:{settings.review_port}/"
                      + (f", answering from {auto_from}" if auto_from else ""), highlight=False)
        try:
            await stop.wait()
        finally:
            server.should_exit = True
            _, late = await asyncio.wait(tasks, timeout=STOP_WAIT)
            for task in late:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)  # failures: logged (Health)
            await queue.stop()

    run(_until_signalled(serve, settings))
