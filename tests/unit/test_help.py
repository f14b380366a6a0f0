"""--help as users read it: square brackets in option help are text, not Rich markup that
swallows them."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from monitor_gateway.cli import app


@pytest.mark.parametrize(("command", "shown"), [
    ("serve", "TOML with [thresholds] and cascade [[stage]] tables"),
    ("serve", "Kafka HOST:PORT [env MONITOR_GATEWAY_KAFKA_BOOTSTRAP]"),
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
