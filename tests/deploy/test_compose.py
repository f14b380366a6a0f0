"""compose.yaml, read as Docker Compose would (no daemon needed): every file it mounts is
in the repository, and the services agree on ports, topics, settings and paths."""

from __future__ import annotations

import fnmatch
import re
from pathlib import PurePosixPath
from typing import Any

import yaml
from paths import ROOT

from monitor_gateway.settings import ENV_PREFIX, GatewaySettings

COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]


def mounts(service: str) -> dict[str, str]:
    """Container path -> repository path of each bind mount."""
    found = {}
    for volume in SERVICES[service].get("volumes", []):
        source, target = volume.split(":")[:2]
        found[target] = source
    return found


def gateway_settings() -> GatewaySettings:
    env = SERVICES["gateway"]["environment"]
    assert all(name.startswith(ENV_PREFIX) for name in env)
    fields = {name.removeprefix(ENV_PREFIX).lower(): value for name, value in env.items()}
    assert set(fields) <= set(GatewaySettings.model_fields), fields
    return GatewaySettings(**fields)  # every value valid


def test_every_mounted_file_is_in_the_repository() -> None:
    for service in SERVICES:
        for source in mounts(service).values():
            assert source.startswith("./") and (ROOT / source).is_file(), (service, source)


def test_the_gateway_reaches_kafka_on_its_advertised_listener() -> None:
    advertised = SERVICES["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    assert f"//{gateway_settings().kafka_bootstrap}" in advertised
    host = re.search(r"HOST://localhost:(\d+)", advertised)
    assert host and f"{host.group(1)}:{host.group(1)}" in SERVICES["kafka"]["ports"]


def test_the_topics_created_are_the_gateways() -> None:
    settings = gateway_settings()
    script = SERVICES["topics"]["command"][0]
    created = dict(re.findall(r"([\w.]+):(\d+)", script.split(";")[0]))
    assert created == {settings.input_topic: "4", settings.verdict_topic: "4",
                       settings.dlq_topic: "1"}
    assert SERVICES["gateway"]["depends_on"]["topics"]["condition"] == \
        "service_completed_successfully"


def test_prometheus_scrapes_the_gateways_metrics_port_and_loads_the_rules() -> None:
    port = gateway_settings().metrics_port
    assert f"{port}:{port}" in SERVICES["gateway"]["ports"]
    config_path = mounts("prometheus")["/etc/prometheus/prometheus.yml"]
    config = yaml.safe_load((ROOT / config_path).read_text())
    targets = config["scrape_configs"][0]["static_configs"][0]["targets"]
    assert targets == [f"gateway:{port}"]
    rules = [target for target, source in mounts("prometheus").items()
             if source.endswith("monitor-gateway.rules.yml")]
    assert rules and any(fnmatch.fnmatch(rules[0], glob) for glob in config["rule_files"])


def test_grafana_provisions_the_dashboard_and_the_prometheus_datasource() -> None:
    grafana = mounts("grafana")
    provider = yaml.safe_load((ROOT / grafana[
        "/etc/grafana/provisioning/dashboards/dashboards.yml"]).read_text())
    folder = provider["providers"][0]["options"]["path"]
    dashboard = [t for t, s in grafana.items() if s == "./dashboards/monitor-gateway.json"]
    assert dashboard and PurePosixPath(dashboard[0]).parent == PurePosixPath(folder)
    assert SERVICES["grafana"]["environment"]["PROMETHEUS_URL"] == "http://prometheus:9090"
    assert "9090:9090" in SERVICES["prometheus"]["ports"]


def test_promtool_accepts_the_prometheus_config() -> None:
    import shutil
    import subprocess

    promtool = shutil.which("promtool")
    assert promtool, "promtool comes with Debian's prometheus package (make test installs it)"
    done = subprocess.run([promtool, "check", "config", "dashboards/prometheus.yml"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
