"""``monitor-gateway``: serve, demo, replay and the embedded broker."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Coroutine
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from replay.dataset import DatasetError, load
from replay.harness import run_replay

from .embedded import BrokerError, EmbeddedBroker, create_topics
from .gateway import Gateway, run_until_signalled
from .monitors import build_monitor
from .settings import GatewaySettings, KafkaSettings, SettingsError, load_settings

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="Monitor AI-agent trajectories on Kafka and publish verdicts.")
T = TypeVar("T")
console = Console()
if not console.is_terminal:  # logs and CI: room for the report table on one line a row
    console.width = max(console.width, 110)

Bootstrap = Annotated[str | None, typer.Option(
    "--bootstrap", help="Kafka HOST:PORT [env MONITOR_GATEWAY_KAFKA_BOOTSTRAP]")]
LogLevel = Annotated[str, typer.Option(help="Log level of the gateway's own log lines.")]


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run on uvloop where it is installed: its event loop roughly halves the gateway's
    per-record scheduling cost (benchmarks/throughput.py)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(2)


def _logging(level: str) -> None:
    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("monitor_gateway").setLevel(level.upper())


def _topics(settings: KafkaSettings, partitions: int) -> dict[str, int]:
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
        help="rules, or a plugin 'package.module:factory'")] = None,
    threshold: Annotated[float | None, typer.Option()] = None,
    fail_policy: Annotated[str | None, typer.Option(help="open or closed")] = None,
    concurrency: Annotated[int | None, typer.Option()] = None,
    max_message_bytes: Annotated[int | None, typer.Option()] = None,
    metrics_port: Annotated[int | None, typer.Option(help="0 turns /metrics off")] = None,
    log_level: LogLevel = "INFO",
) -> None:
    """Run the gateway until SIGTERM or Ctrl-C."""
    _logging(log_level)
    try:
        settings = load_settings(GatewaySettings, {
            "kafka_bootstrap": bootstrap, "input_topic": input_topic,
            "verdict_topic": verdict_topic, "dlq_topic": dlq_topic, "group_id": group_id,
            "monitor": monitor, "threshold": threshold, "fail_policy": fail_policy,
            "concurrency": concurrency, "max_message_bytes": max_message_bytes,
            "metrics_port": metrics_port,
        })
        settings.security()  # a bad security setting fails here, in one line
        judge = build_monitor(settings)
    except SettingsError as exc:
        raise _fail(str(exc)) from None
    run(run_until_signalled(settings, judge))


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
        raise _fail(str(exc)) from None
    try:
        settings = KafkaSettings(kafka_bootstrap=embedded.bootstrap)
        run(create_topics(settings, _topics(settings, partitions)))
        console.print(f"broker on [bold]{embedded.bootstrap}[/bold] with topics "
                      f"{', '.join(_topics(settings, partitions))}; Ctrl-C stops it")
        run(_wait_forever())
    except KeyboardInterrupt:
        pass
    finally:
        embedded.stop()


async def _wait_forever() -> None:
    await asyncio.Event().wait()


@app.command()
def replay(
    dataset: Annotated[Path, typer.Option(help="benchmark file, JSONL or a JSON array")],
    bootstrap: Bootstrap = None,
    rate: Annotated[float | None, typer.Option(help="samples per second; default: at once")] = None,
    timeout: Annotated[float, typer.Option(help="seconds to wait for a missing verdict")] = 30.0,
    json_path: Annotated[Path | None, typer.Option("--json", help="write the report here")] = None,
    seed: Annotated[int | None, typer.Option(help="seed for the order within pairs")] = None,
) -> None:
    """Stream a benchmark through a running gateway and print MR/FAR."""
    try:
        settings = load_settings(KafkaSettings, {"kafka_bootstrap": bootstrap})
        samples = load(dataset)
    except (SettingsError, DatasetError) as exc:
        raise _fail(str(exc)) from None
    report, _ = run(run_replay(settings, samples, dataset=str(dataset), console=console,
                                       rate=rate, timeout=timeout, seed=seed))
    _finish(report, json_path)


def _finish(report: dict[str, Any], json_path: Path | None) -> None:
    from replay.report import print_report

    print_report(report, console)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2))
        console.print(f"report written to {json_path}")


@app.command()
def demo(
    bootstrap: Annotated[str | None, typer.Option(
        "--bootstrap", help="use this Kafka instead of starting the embedded broker")] = None,
    out: Annotated[Path, typer.Option(help="where the report goes")] = Path("out"),
    metrics_port: Annotated[int, typer.Option(help="/metrics and /health port")] = 9464,
    partitions: int = 4,
    log_level: LogLevel = "WARNING",
) -> None:
    """Broker + gateway with the offline monitor; replay the demo pairs; print MR/FAR."""
    _logging(log_level)
    embedded = None
    try:
        if bootstrap is None:
            embedded = EmbeddedBroker().start()
            bootstrap = embedded.bootstrap
            console.print(f"embedded broker on {bootstrap}")
        settings = load_settings(GatewaySettings, {
            "kafka_bootstrap": bootstrap, "metrics_port": metrics_port, "monitor": "rules",
            "group_id": "monitor-gateway-demo"})
        data = resources.files("replay") / "data" / "demo.jsonl"
        samples = load(Path(str(data)))
        report = run(_demo(settings, samples, partitions))
    except (SettingsError, DatasetError, BrokerError) as exc:
        raise _fail(str(exc)) from None
    finally:
        if embedded is not None:
            embedded.stop()
    _finish(report, out / "report.json")


async def _demo(settings: GatewaySettings, samples: list[Any], partitions: int) -> dict[str, Any]:
    await create_topics(settings, _topics(settings, partitions))
    gateway = Gateway(settings, build_monitor(settings))
    await gateway.start()
    console.print(f"gateway running; metrics on http://127.0.0.1:{settings.metrics_port}/metrics")
    try:
        report, _ = await run_replay(settings, samples, dataset="demo", console=console)
    finally:
        await gateway.stop()
    return report


