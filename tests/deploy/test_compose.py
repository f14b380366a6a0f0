"""compose.yaml, read as Docker Compose would (no daemon needed): every file it mounts is
in the repository, and the services agree on ports, topics, settings and paths."""

from __future__ import annotations

import fnmatch
import re
from pathlib import PurePosixPath
from typing import Any, TypeVar

import yaml
from paths import ROOT

from monitor_gateway.settings import ENV_PREFIX, GatewaySettings, GuardSettings, KafkaSettings
from review.settings import ReviewSettings

COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
S = TypeVar("S", bound=KafkaSettings)


def mounts(service: str) -> dict[str, str]:
    """Container path -> repository path of each bind mount."""
    found = {}
    for volume in SERVICES[service].get("volumes", []):
        source, target = volume.split(":")[:2]
        found[target] = source
    return found


def interpolated(value: str) -> str:
    """A value as Compose reads it with the variable unset: ``${VAR:-default}`` is the
    default."""
    return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)


def service_settings(service: str, kind: type[S]) -> S:
    env = SERVICES[service]["environment"]
    assert all(name.startswith(ENV_PREFIX) for name in env)
    fields = {name.removeprefix(ENV_PREFIX).lower(): interpolated(value)
              for name, value in env.items()}
    assert set(fields) <= set(kind.model_fields), fields
    return kind.model_validate(fields)  # every value valid


def gateway_settings() -> GatewaySettings:
    return service_settings("gateway", GatewaySettings)


def review_settings() -> ReviewSettings:
    return service_settings("review", ReviewSettings)


def guard_settings() -> GuardSettings:
    return service_settings("guard", GuardSettings)


def published(service: str) -> set[int]:
    """The container ports published on the host."""
    return {int(str(port).rsplit(":", 1)[1]) for port in SERVICES[service].get("ports", [])}


def test_every_mounted_file_is_in_the_repository() -> None:
    for service in SERVICES:
        for source in mounts(service).values():
            assert source.startswith("./") and (ROOT / source).is_file(), (service, source)


def test_the_gateway_reaches_kafka_on_its_advertised_listener() -> None:
    advertised = SERVICES["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    assert f"//{gateway_settings().kafka_bootstrap}" in advertised
    host = re.search(r"HOST://localhost:(\d+)", advertised)
    assert host and f"{host.group(1)}:{host.group(1)}" in SERVICES["kafka"]["ports"]


def test_the_topics_created_are_the_gateways_the_review_loops_and_the_guards() -> None:
    settings, review, guard = gateway_settings(), review_settings(), guard_settings()
    script = SERVICES["topics"]["command"][0]
    created = dict(re.findall(r"([\w.-]+):(\d+)", script.split(";")[0]))
    assert created == {settings.input_topic: "4", settings.verdict_topic: "4",
                       settings.dlq_topic: "1", review.review_topic: "1",
                       review.labels_topic: "1", guard.guard_topic: "4"}
    for service in ("gateway", "review-sampler", "review", "guard"):
        assert SERVICES[service]["depends_on"]["topics"]["condition"] == \
            "service_completed_successfully"


def test_the_review_service_and_the_guard_run_the_gateways_image_with_their_commands() -> None:
    """The same build, its own command, reachable from the other containers, published on
    the host, and checked on its own port's /health (the image's HEALTHCHECK asks the
    gateway's); the sampler beside them."""
    review, guard = review_settings(), guard_settings()
    sampler = service_settings("review-sampler", ReviewSettings)
    assert review.kafka_bootstrap == guard.kafka_bootstrap == sampler.kafka_bootstrap == \
        gateway_settings().kafka_bootstrap
    # the sampler serves nothing to probe: it exits on an error, and Compose restarts it
    assert SERVICES["review-sampler"]["command"] == ["review-sampler"]
    assert SERVICES["review-sampler"]["restart"] == "on-failure"
    assert "ports" not in SERVICES["review-sampler"]
    for service, command, host, port in (
        ("review", ["review"], review.review_host, review.review_port),
        ("guard", ["guard"], guard.guard_host, guard.guard_port),
    ):
        assert SERVICES[service]["build"] == SERVICES["gateway"]["build"]
        assert SERVICES[service]["command"] == command
        assert host == "0.0.0.0" and port in published(service)
        probe = " ".join(SERVICES[service]["healthcheck"]["test"])
        assert f"http://127.0.0.1:{port}/health" in probe
    assert review.review_token is not None and review.review_token.get_secret_value()
    assert SERVICES["review"]["ports"] == [f"127.0.0.1:{review.review_port}:{review.review_port}"]
    assert guard.monitor == "offline"  # judges within its budget without a model server


def test_prometheus_scrapes_each_service_under_its_own_job_and_loads_the_rules() -> None:
    """The gateway's, the review service's and the guard's /metrics, one job each: the
    dashboard's $job and $review_job pick them apart."""
    port = gateway_settings().metrics_port
    assert f"{port}:{port}" in SERVICES["gateway"]["ports"]
    config_path = mounts("prometheus")["/etc/prometheus/prometheus.yml"]
    config = yaml.safe_load((ROOT / config_path).read_text())
    jobs = {job["job_name"]: [t for c in job["static_configs"] for t in c["targets"]]
            for job in config["scrape_configs"]}
    assert all(job.get("metrics_path", "/metrics") == "/metrics"
               for job in config["scrape_configs"])
    assert sorted(jobs.values()) == sorted([
        [f"gateway:{port}"], [f"review:{review_settings().review_port}"],
        [f"guard:{guard_settings().guard_port}"]])
    assert set(SERVICES["prometheus"]["depends_on"]) == {"gateway", "review", "guard"}
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
