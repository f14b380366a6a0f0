"""Options as users meet them: --help where square brackets are text, not Rich markup that
swallows them, and a bad flag value blamed on the flag, in one line."""

from __future__ import annotations

import logging
import socket

import pytest
from loglines import logging_restored
from typer.testing import CliRunner

from monitor_gateway.cli import app, setup_logging
from monitor_gateway.logs import RepeatFilter
from monitor_gateway.settings import GatewaySettings, flag


def test_a_later_tests_log_capture_sees_every_line(caplog: pytest.LogCaptureFixture) -> None:
    """What the set-up left is undone: a line logged twice is captured twice (the
    RepeatFilter would hold the second back for 10 s), at the level it had."""
    level = logging.getLogger("monitor_gateway").level
    with logging_restored():
        setup_logging("debug")
        assert any(isinstance(f, RepeatFilter)
                   for handler in logging.getLogger().handlers for f in handler.filters)
    for _ in range(2):
        logging.getLogger("monitor_gateway.cli").warning("the broker is gone")
    assert [r.getMessage() for r in caplog.records] == ["the broker is gone"] * 2
    assert logging.getLogger("monitor_gateway").level == level


@pytest.mark.parametrize(("command", "shown"), [
    ("serve", "TOML with [thresholds] and cascade [[stage]] tables"),
    ("serve", "Kafka HOST:PORT [env MONITOR_GATEWAY_KAFKA_BOOTSTRAP, default 127.0.0.1:9092]"),
    ("calibrate", "the monitor config to write [thresholds] to"),
])
def test_bracketed_help_text_is_shown(command: str, shown: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert shown in result.output


def test_version_is_the_installed_packages() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"monitor-gateway {version('monitor-gateway')}"


@pytest.mark.parametrize("command", ["serve", "send", "tail"])
def test_every_setting_flag_names_its_variable_and_default(command: str) -> None:
    """Settings are read by pydantic-settings, so the flag's help is where a user learns
    the variable and the default."""
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    settings = {flag(name) for name in GatewaySettings.model_fields}
    if command == "tail":
        settings.discard("--monitor")  # there, a filter on the verdicts' monitor
    flags = [line for line in result.output.splitlines() if "│ --" in line
             and line.split("│ ", 1)[1].split()[0] in settings]
    assert len(flags) >= 3
    for line in flags:
        assert "[env MONITOR_GATEWAY_" in line, line
    if command == "serve":
        assert "[env MONITOR_GATEWAY_CONCURRENCY, default 64]" in result.output


def test_a_bad_flag_is_blamed_on_the_flag_and_a_bad_variable_on_the_variable() -> None:
    result = CliRunner().invoke(app, ["serve", "--concurrency", "0"])
    assert result.exit_code == 2
    assert result.output.startswith("error: --concurrency: Input should be greater than")
    result = CliRunner().invoke(app, ["serve"], env={"MONITOR_GATEWAY_CONCURRENCY": "0"})
    assert result.exit_code == 2
    assert result.output.startswith("error: MONITOR_GATEWAY_CONCURRENCY: Input should be")
    result = CliRunner().invoke(app, ["serve", "--bootstrap", ""], env={
        "MONITOR_GATEWAY_SECURITY_PROTOCOL": "SASL_SSL"})
    assert "MONITOR_GATEWAY_SASL_PLAIN_USERNAME" in result.output


@pytest.mark.parametrize(("args", "env", "blamed"), [
    (["--monitor", "nonsense"], {}, "error: --monitor: unknown monitor 'nonsense'"),
    ([], {"MONITOR_GATEWAY_MONITOR": "nonsense"},
     "error: MONITOR_GATEWAY_MONITOR: unknown monitor 'nonsense'"),
    (["--monitor", "builtins:str"], {}, "error: --monitor: 'builtins:str' did not return"),
])
def test_a_monitor_that_cannot_be_built_is_blamed_on_what_named_it(
        args: list[str], env: dict[str, str], blamed: str) -> None:
    """The monitor is built after the settings are read: its error still names the flag
    the user typed, or the variable when the value came from the environment."""
    result = CliRunner().invoke(app, ["serve", *args], env={"COLUMNS": "300", **env})
    assert result.exit_code == 2
    assert result.output.startswith(blamed) and len(result.output.splitlines()) == 1, \
        result.output


def test_serve_embedded_on_a_taken_address_is_one_line_naming_the_setting() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--embedded", "--bootstrap",
                                          f"127.0.0.1:{port}", "--metrics-port", "0"],
                                    env={"COLUMNS": "300"})
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: --embedded: 127.0.0.1:{port} is in use (a broker already there? then leave "
        "out --embedded); set --bootstrap to a free HOST:PORT"]
