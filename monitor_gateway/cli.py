"""``monitor-gateway``: ``serve`` and the embedded ``broker``; layers above the service (the
benchmark's ``demo``, ``replay``, ``calibrate``, ...) add their commands through the
``monitor_gateway.commands`` entry point group."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Coroutine
from importlib.metadata import entry_points, version
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from .embedded import BrokerError, EmbeddedBroker, create_topics
from .gateway import run_until_signalled
from .logs import install_repeat_filter
from .monitors import available, build_monitor
from .settings import GatewaySettings, KafkaSettings, SettingsError, load_settings
from .tracing import from_settings

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="Monitor AI-agent trajectories on Kafka and publish verdicts.")
T = TypeVar("T")
console = Console()
if not console.is_terminal:  # logs and CI: room for the report table on one line a row
    console.width = max(console.width, 110)

def _print_version(show: bool) -> None:
    if show:
        console.print(f"monitor-gateway {version('monitor-gateway')}", highlight=False)
        raise typer.Exit()


@app.callback()
def main(show_version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print the version and exit.")] = False) -> None:
    """Monitor AI-agent trajectories on Kafka and publish verdicts."""


Bootstrap = Annotated[str | None, typer.Option(
    "--bootstrap", help=r"Kafka HOST:PORT \[env MONITOR_GATEWAY_KAFKA_BOOTSTRAP]")]
LogLevel = Annotated[str, typer.Option(help="Log level of the gateway's own log lines.")]


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run on uvloop where it is installed: its event loop roughly halves the gateway's
    per-record scheduling cost (benchmarks/throughput.py)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    return typer.Exit(2)


def setup_logging(level: str) -> None:
    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("monitor_gateway").setLevel(level.upper())
    install_repeat_filter()  # an outage is a few lines with counts, not a flood


def topics(settings: KafkaSettings, partitions: int) -> dict[str, int]:
    return {settings.input_topic: partitions, settings.verdict_topic: partitions,
            settings.dlq_topic: 1}


@app.command()
def serve(
    bootstrap: Bootstrap = None,
    input_topic: Annotated[str | None, typer.Option()] = None,
    verdict_topic: Annotated[str | None, typer.Option()] = None,
    dlq_topic: Annotated[str | None, typer.Option()] = None,
    group_id: Annotated[str | None, typer.Option()] = None,
    monitor: Annotated[str | None, typer.Option(
        help=f"{', '.join(available())}, or a plugin 'package.module:factory'")] = None,
    monitor_config: Annotated[Path | None, typer.Option(
        help=r"TOML with \[thresholds] and cascade \[\[stage]] tables")] = None,
    threshold: Annotated[float | None, typer.Option()] = None,
    fail_policy: Annotated[str | None, typer.Option(help="open or closed")] = None,
    concurrency: Annotated[int | None, typer.Option()] = None,
    workers: Annotated[int | None, typer.Option(
        help="worker processes for a CPU-bound monitor; 0 judges on the fetch loop")] = None,
    max_message_bytes: Annotated[int | None, typer.Option()] = None,
    metrics_port: Annotated[int | None, typer.Option(help="0 turns /metrics off")] = None,
    otlp_endpoint: Annotated[str | None, typer.Option(
        help="OTLP/HTTP collector, e.g. http://otel-collector:4318: turns tracing on")] = None,
    log_level: LogLevel = "INFO",
) -> None:
    """Run the gateway until SIGTERM or Ctrl-C."""
    setup_logging(log_level)
    try:
        settings = load_settings(GatewaySettings, {
            "kafka_bootstrap": bootstrap, "input_topic": input_topic,
            "verdict_topic": verdict_topic, "dlq_topic": dlq_topic, "group_id": group_id,
            "monitor": monitor, "threshold": threshold, "fail_policy": fail_policy,
            "concurrency": concurrency, "workers": workers, "max_message_bytes": max_message_bytes,
            "metrics_port": metrics_port, "otlp_endpoint": otlp_endpoint,
            "monitor_config": str(monitor_config) if monitor_config else None,
        })
        settings.security()  # a bad security setting fails here, in one line
        judge = build_monitor(settings)
        tracing = from_settings(settings)
    except SettingsError as exc:
        raise fail(str(exc)) from None
    run(run_until_signalled(settings, judge, tracing))


@app.command()
def broker(
    port: Annotated[int, typer.Option(help="0 picks a free port")] = 9092,
    host: str = "127.0.0.1",
    partitions: Annotated[int, typer.Option(help="partitions of the gateway's topics")] = 4,
) -> None:
    """Run the embedded Kafka-protocol broker (memory only) for development."""
    try:
        embedded = EmbeddedBroker(port, host).start()
    except BrokerError as exc:
        raise fail(str(exc)) from None
    # SIGTERM (docker stop, kill, a supervisor) stops the broker as Ctrl-C does
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        settings = KafkaSettings(kafka_bootstrap=embedded.bootstrap)
        run(create_topics(settings, topics(settings, partitions)))
        console.print(f"broker on [bold]{embedded.bootstrap}[/bold] with topics "
                      f"{', '.join(topics(settings, partitions))}; Ctrl-C stops it")
        run(_wait_forever())
    except KeyboardInterrupt:
        pass
    finally:
        embedded.stop()


async def _wait_forever() -> None:
    await asyncio.Event().wait()




def _add_commands(app: typer.Typer) -> None:
    """Commands of the layers installed above the service (entry point group
    ``monitor_gateway.commands``: a function that takes the app and adds to it)."""
    for entry in entry_points(group="monitor_gateway.commands"):
        entry.load()(app)


_add_commands(app)
