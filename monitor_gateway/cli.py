"""``monitor-gateway``: ``serve`` and the embedded ``broker``; layers above the service (the
benchmark's ``demo``, ``replay``, ``calibrate``, ...) add their commands through the
``monitor_gateway.commands`` entry point group."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Coroutine, Iterator
from importlib.metadata import entry_points, version
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from aiokafka.errors import KafkaConnectionError
from rich.console import Console
from rich.markup import escape

from .client import TopicMissing, TrajectoryProducer, judged, read_trajectories, verdicts
from .config import load_config
from .embedded import BrokerError, EmbeddedBroker, PortTaken, create_topics
from .gateway import StartupError, run_until_signalled
from .ingest import Rejection
from .logs import install_repeat_filter
from .monitors import available, build_monitor
from .policy import Policy
from .schema import DeadLetter, Trajectory, Verdict
from .settings import (
    ENV_PREFIX,
    GatewaySettings,
    GuardSettings,
    KafkaSettings,
    SettingsError,
    flag,
    load_settings,
)
from .tailing import CONTEXT_WAIT, in_context, show
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


def setting(name: str, help: str = "", model: type[GatewaySettings] = GatewaySettings) -> Any:
    """A flag that overrides a setting of ``model``: its help names the environment
    variable and the default, since pydantic-settings (not the flag parser) reads them."""
    default = model.model_fields[name].default
    shown = "" if default is None else f", default {default}"
    where = rf"\[env {ENV_PREFIX}{name.upper()}{shown}]"
    return typer.Option(flag(name), help=f"{help} {where}".strip())


Bootstrap = Annotated[str | None, setting("kafka_bootstrap", "Kafka HOST:PORT")]
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
    console.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(2)


def setup_logging(level: str) -> None:
    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("monitor_gateway").setLevel(level.upper())
    install_repeat_filter()  # an outage is a few lines with counts, not a flood


def topics(settings: KafkaSettings, partitions: int) -> dict[str, int]:
    return {settings.input_topic: partitions, settings.verdict_topic: partitions,
            settings.dlq_topic: 1, settings.step_topic: partitions,
            settings.step_verdict_topic: partitions}


@app.command()
def serve(
    bootstrap: Bootstrap = None,
    input_topic: Annotated[str | None, setting("input_topic")] = None,
    verdict_topic: Annotated[str | None, setting("verdict_topic")] = None,
    dlq_topic: Annotated[str | None, setting("dlq_topic")] = None,
    group_id: Annotated[str | None, setting("group_id")] = None,
    monitor: Annotated[str | None, setting(
        "monitor", f"{', '.join(available())}, or a plugin 'package.module:factory'")] = None,
    monitor_config: Annotated[Path | None, setting(
        "monitor_config", r"TOML with \[thresholds] and cascade \[\[stage]] tables")] = None,
    threshold: Annotated[float | None, setting("threshold", "flag at or above this score")
                         ] = None,
    fail_policy: Annotated[str | None, setting(
        "fail_policy", "open or closed: whether an error verdict is flagged")] = None,
    concurrency: Annotated[int | None, setting(
        "concurrency", "most monitor calls in flight")] = None,
    workers: Annotated[int | None, setting(
        "workers", "worker processes for a CPU-bound monitor; 0 judges on the fetch loop; "
        "unset: the monitor's choice")] = None,
    max_message_bytes: Annotated[int | None, setting(
        "max_message_bytes", "larger trajectories get a dead letter")] = None,
    metrics_port: Annotated[int | None, setting("metrics_port", "0 turns /metrics off")] = None,
    otlp_endpoint: Annotated[str | None, setting(
        "otlp_endpoint", "OTLP/HTTP collector, e.g. http://otel-collector:4318: turns tracing "
        "on")] = None,
    consume_steps: Annotated[bool | None, setting(
        "consume_steps", "also judge runs sent step by step, on the step topic")] = None,
    log_level: LogLevel = "INFO",
    debug: Annotated[bool, typer.Option(help="a traceback with a start-up error")] = False,
    embedded: Annotated[bool, typer.Option(
        help="first start the embedded broker at the bootstrap address, with the topics "
             "(memory only: for trying the gateway out)")] = False,
) -> None:
    """Run the gateway until SIGTERM or Ctrl-C."""
    setup_logging(log_level)
    flags = {name: value for name, value in {
        "kafka_bootstrap": bootstrap, "input_topic": input_topic,
        "verdict_topic": verdict_topic, "dlq_topic": dlq_topic, "group_id": group_id,
        "monitor": monitor, "threshold": threshold, "fail_policy": fail_policy,
        "concurrency": concurrency, "workers": workers, "max_message_bytes": max_message_bytes,
        "metrics_port": metrics_port, "otlp_endpoint": otlp_endpoint,
        "consume_steps": consume_steps,
        "monitor_config": str(monitor_config) if monitor_config else None,
    }.items() if value is not None}
    try:
        settings = load_settings(GatewaySettings, flags)
        settings.security()  # a bad security setting fails here, in one line
        judge = build_monitor(settings)
        tracing = from_settings(settings)
    except SettingsError as exc:
        raise fail(exc.blaming(flags)) from None
    started: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if embedded:
        host, _, port = settings.kafka_bootstrap.split(",")[0].rpartition(":")
        if not port.isdigit():
            raise fail(f"--embedded needs --bootstrap as HOST:PORT, got "
                       f"{settings.kafka_bootstrap!r}")
        started = embedded_broker(settings, host or "127.0.0.1", int(port), taken=(
            f"--embedded: {host}:{port} is in use (a broker already there? then leave out "
            "--embedded); set --bootstrap to a free HOST:PORT"))
    with started:
        try:
            run(run_until_signalled(settings, judge, tracing))
        except StartupError as exc:
            if debug:
                raise
            raise fail(str(exc)) from None


def guard_setting(name: str, help: str = "") -> Any:
    """:func:`setting` for ``guard``: its defaults are the guard's (``MONITOR`` is
    ``offline``)."""
    return setting(name, help, GuardSettings)


@app.command()
def guard(
    bootstrap: Bootstrap = None,
    guard_host: Annotated[str | None, guard_setting(
        "guard_host", "the address to listen on")] = None,
    guard_port: Annotated[int | None, guard_setting("guard_port", "0 picks a free port")] = None,
    guard_budget: Annotated[float | None, guard_setting(
        "guard_budget", "seconds a judgement may take; past it, the fail policy answers")
                            ] = None,
    guard_topic: Annotated[str | None, guard_setting(
        "guard_topic", "where every decision is published")] = None,
    monitor: Annotated[str | None, guard_setting(
        "monitor", f"{', '.join(available())}, or a plugin 'package.module:factory'")] = None,
    monitor_config: Annotated[Path | None, guard_setting(
        "monitor_config", r"TOML with \[thresholds] and cascade \[\[stage]] tables")] = None,
    threshold: Annotated[float | None, guard_setting("threshold", "block at or above this score")
                         ] = None,
    fail_policy: Annotated[str | None, guard_setting(
        "fail_policy", "open or closed: whether a call is allowed or blocked when there is "
        "no judgement in time")] = None,
    workers: Annotated[int | None, guard_setting(
        "workers", "worker processes for a CPU-bound monitor; 0 judges on the guard's event "
        "loop; unset: the monitor's choice")] = None,
    log_level: LogLevel = "INFO",
) -> None:
    """Answer allow or block for an agent's proposed tool call, on POST /check, until
    SIGTERM or Ctrl-C; every decision is also published to Kafka."""
    from .guard import serve as serve_guard

    setup_logging(log_level)
    flags = {name: value for name, value in {
        "kafka_bootstrap": bootstrap, "guard_host": guard_host, "guard_port": guard_port,
        "guard_budget": guard_budget, "guard_topic": guard_topic, "monitor": monitor,
        "threshold": threshold, "fail_policy": fail_policy, "workers": workers,
        "monitor_config": str(monitor_config) if monitor_config else None,
    }.items() if value is not None}
    try:
        settings = load_settings(GuardSettings, flags)
        settings.security()
        judge = build_monitor(settings)
        policy = Policy.build(settings, load_config(settings.monitor_config))
    except SettingsError as exc:
        raise fail(exc.blaming(flags)) from None

    async def answer() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(number, stop.set)
        await serve_guard(settings, judge, policy, stop)

    try:
        run(answer())
    except OSError as exc:  # the port is taken, the address is not this machine's
        raise fail(f"cannot listen on {settings.guard_host}:{settings.guard_port}: "
                   f"{exc.strerror or exc}; set {flag('guard_port')} or "
                   f"{ENV_PREFIX}GUARD_PORT") from None


@contextlib.contextmanager
def embedded_broker(settings: KafkaSettings, host: str, port: int, taken: str,
                    partitions: int = 4) -> Iterator[KafkaSettings]:
    """The embedded broker at HOST:PORT (0: a free port) with the settings' topics, while
    in use; the settings pointing at it. ``taken``: what to say if the address is taken."""
    try:
        broker = EmbeddedBroker(port, host).start()
    except PortTaken:
        raise fail(taken) from None
    except BrokerError as exc:
        raise fail(str(exc)) from None
    try:
        settings = settings.model_copy(update={"kafka_bootstrap": broker.bootstrap})
        run(create_topics(settings, topics(settings, partitions)))
        console.print(f"embedded broker on [bold]{broker.bootstrap}[/bold] (memory only) with "
                      f"topics {', '.join(topics(settings, partitions))}", highlight=False)
        yield settings
    finally:
        broker.stop()


@app.command()
def broker(
    port: Annotated[int, typer.Option(help="0 picks a free port")] = 9092,
    host: str = "127.0.0.1",
    partitions: Annotated[int, typer.Option(help="partitions of the gateway's topics")] = 4,
) -> None:
    """Run the embedded Kafka-protocol broker (memory only) for development."""
    # SIGTERM (docker stop, kill, a supervisor) stops the broker as Ctrl-C does
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with contextlib.suppress(KeyboardInterrupt), embedded_broker(
            KafkaSettings(), host, port, partitions=partitions,
            taken=f"port {port} on {host} is in use by another process (a broker left "
                  "running?); stop it or choose another --port"):
        console.print("Ctrl-C stops it")
        while True:  # no event loop waits here: under uvloop, a SIGINT was once lost
            signal.pause()


@app.command()
def send(
    file: Annotated[str, typer.Argument(
        help="trajectories: one JSON object, or JSON Lines; - reads standard input")],
    bootstrap: Bootstrap = None,
    input_topic: Annotated[str | None, setting("input_topic")] = None,
    verdict_topic: Annotated[str | None, setting("verdict_topic")] = None,
    wait: Annotated[bool, typer.Option(
        help="then show each one's verdict as tail does (exit 1 if one got none)")] = False,
    timeout: Annotated[float, typer.Option(
        help="with --wait: give up after this many seconds without a verdict")] = 30.0,
) -> None:
    """Validate trajectories and send the valid ones to the gateway's input topic.

    Each is checked as the gateway will; those refused are listed with the reason (exit 1).
    """
    settings = _kafka_settings({"kafka_bootstrap": bootstrap, "input_topic": input_topic,
                                "verdict_topic": verdict_topic})
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"{file}: cannot read: {exc}") from None
    read = list(read_trajectories(text, GatewaySettings().max_message_bytes))
    valid = [t for _, t in read if isinstance(t, Trajectory)]
    for line, outcome in read:
        if isinstance(outcome, Rejection):
            console.print(f"[red]refused[/red] {escape(file)}:{line}: {outcome.error}: "
                          f"{escape(outcome.detail)}", highlight=False)
    judged_ids: set[str] = set()
    if valid and wait:
        run(_kafka(settings, _send_and_show(settings, valid, timeout, judged_ids)))
    elif valid:
        run(_kafka(settings, _send_all(settings, valid)))
    console.print(f"sent {len(valid)} trajector{'y' if len(valid) == 1 else 'ies'} to "
                  f"{settings.input_topic} on {settings.kafka_bootstrap}", highlight=False)
    ids = {t.id for t in valid}  # a trajectory sent twice gets one verdict to wait for
    unjudged = len(ids - judged_ids) if wait else 0
    if unjudged:
        console.print(f"[red]{unjudged} of {len(ids)} got no verdict within {timeout:g} s"
                      f"[/red]: is a gateway consuming {escape(settings.input_topic)} on "
                      f"{escape(settings.kafka_bootstrap)} and writing to "
                      f"{escape(settings.verdict_topic)}?", highlight=False)
    if len(valid) < len(read) or not read or unjudged:
        raise typer.Exit(1)


async def _send_all(settings: KafkaSettings, trajectories: list[Trajectory]) -> None:
    async with TrajectoryProducer(settings) as producer:
        for trajectory in trajectories:
            await producer.send(trajectory)


async def _send_and_show(settings: KafkaSettings, trajectories: list[Trajectory],
                         timeout: float, shown: set[str]) -> None:
    by_id = {t.id: t for t in trajectories}
    async for verdict in judged(trajectories, settings, timeout):
        show(console, verdict, by_id[verdict.trajectory_id])
        shown.add(verdict.trajectory_id)


@app.command()
def tail(
    bootstrap: Bootstrap = None,
    verdict_topic: Annotated[str | None, setting("verdict_topic")] = None,
    dlq_topic: Annotated[str | None, setting("dlq_topic")] = None,
    dead_letters: Annotated[bool, typer.Option(help="also follow the dead-letter topic")] = False,
    flagged: Annotated[bool, typer.Option(help="flagged verdicts only")] = False,
    category: Annotated[list[str] | None, typer.Option(help="these categories only")] = None,
    monitor: Annotated[str | None, typer.Option(
        help="verdicts of this monitor only (its name or backend)")] = None,
    replay_run: Annotated[str | None, typer.Option(
        "--run", help="verdicts of this replay run only")] = None,
    from_beginning: Annotated[bool, typer.Option(
        help="from the topics' start, not from now")] = False,
    count: Annotated[int | None, typer.Option(help="stop after this many")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object a line")] = False,
    context: Annotated[bool, typer.Option(
        help="show each quote in its trajectory's text (also reads the input topic)")] = True,
    input_topic: Annotated[str | None, setting("input_topic")] = None,
) -> None:
    """Follow the gateway's verdicts: a line each, and a flagged one's evidence."""
    settings = _kafka_settings({"kafka_bootstrap": bootstrap, "verdict_topic": verdict_topic,
                                "dlq_topic": dlq_topic, "input_topic": input_topic})

    def wanted(message: Verdict | DeadLetter) -> bool:
        if isinstance(message, DeadLetter):
            return not (flagged or category or monitor or replay_run)
        return ((not flagged or message.flagged)
                and (not category or message.category in category)
                and (not monitor or monitor in (message.monitor.name, message.monitor.backend))
                and (not replay_run or message.replay_run == replay_run))

    async def follow() -> None:
        shown = 0
        reading = context and not as_json  # the trajectories, to show quotes in context
        async for message, trajectory in in_context(verdicts(
                settings, dead_letters=dead_letters, trajectories=reading,
                from_beginning=from_beginning), wait=CONTEXT_WAIT if reading else 0):
            if not wanted(message):
                continue
            if as_json:
                print(message.model_dump_json(), flush=True)
            else:
                show(console, message, trajectory)
            shown += 1
            if count is not None and shown >= count:
                return

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a tail ends
        run(_kafka(settings, follow()))


def _kafka_settings(overrides: dict[str, Any]) -> KafkaSettings:
    try:
        settings = load_settings(KafkaSettings, overrides)
        settings.security()
    except SettingsError as exc:
        raise fail(str(exc)) from None
    return settings


async def _kafka(settings: KafkaSettings, work: Coroutine[Any, Any, None]) -> None:
    """``work`` talking to Kafka; an unreachable broker is one line, not a traceback (nor
    aiokafka's own log lines about each attempt)."""
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    try:
        await work
    except KafkaConnectionError:
        raise fail(settings.unreachable()) from None
    except TopicMissing as exc:
        raise fail(str(exc)) from None


def _add_commands(app: typer.Typer) -> None:
    """Commands of the layers installed above the service (entry point group
    ``monitor_gateway.commands``: a function that takes the app and adds to it)."""
    for entry in entry_points(group="monitor_gateway.commands"):
        entry.load()(app)


_add_commands(app)
