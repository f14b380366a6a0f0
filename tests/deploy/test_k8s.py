"""The Kubernetes manifests, validated offline: core kinds with kubernetes-validate's
schemas, custom resources against the CRD schemas kept in k8s/schemas/, every overlay as
kustomize builds it, and the properties a deployment depends on."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, TypeVar

import jsonschema
import kubernetes_validate
import pytest
import yaml
from paths import ROOT

from monitor_gateway.settings import ENV_PREFIX, GuardSettings, KafkaSettings
from review.settings import ReviewSettings

K8S = ROOT / "k8s"
OVERLAYS = sorted(p.parent for p in (K8S / "overlays").glob("*/kustomization.yaml"))
KUBERNETES = "1.30"  # native sidecars (1.29+)
S = TypeVar("S", bound=KafkaSettings)
CRDS = {(s["properties"]["apiVersion"]["const"], s["properties"]["kind"]["const"]): s
        for s in (json.loads(p.read_text()) for p in (K8S / "schemas").glob("*.json"))}


def validate(document: dict[str, Any]) -> None:
    schema = CRDS.get((document["apiVersion"], document["kind"]))
    if schema is not None:
        jsonschema.validate(document, schema)
    else:
        kubernetes_validate.validate(document, KUBERNETES, strict=True)


def build(overlay: Path) -> list[dict[str, Any]]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl (with its built-in kustomize) is not installed")
    done = subprocess.run(["kubectl", "kustomize", str(overlay)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def resources() -> list[tuple[str, dict[str, Any]]]:
    """Every object in k8s/ as written (patches and kustomizations aside)."""
    found = []
    for path in sorted(K8S.rglob("*.yaml")):
        text = path.read_text()
        if path.name == "kustomization.yaml" or "$patch" in text:
            continue
        for document in yaml.safe_load_all(text):
            if document and document.get("kind"):
                found.append((str(path.relative_to(K8S)), document))
    return found


@pytest.mark.parametrize("name,document", resources(), ids=lambda v: v if isinstance(v, str)
                         else "")
def test_every_manifest_is_valid(name: str, document: dict[str, Any]) -> None:
    validate(document)


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_every_overlay_builds_into_valid_objects(overlay: Path) -> None:
    documents = build(overlay)
    assert documents
    for document in documents:
        validate(document)


def test_the_schemas_refuse_what_the_api_server_would() -> None:
    monitor = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
               "metadata": {"name": "m"}, "spec": {"selector": {}, "endpoints": [{"prot": "x"}]}}
    with pytest.raises(jsonschema.ValidationError):
        validate(monitor)  # a misspelt field
    deployment = yaml.safe_load((K8S / "base/deployment.yaml").read_text())
    deployment["spec"]["template"]["spec"]["containers"][0]["livenessprobe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(deployment)


def render_module() -> Any:
    spec = importlib.util.spec_from_file_location("render", K8S / "render.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rendered_monitoring_objects_are_up_to_date() -> None:
    """The PrometheusRule and dashboard ConfigMap come from dashboards/, never by hand."""
    for path, text in render_module().rendered().items():
        assert path.read_text() == text, f"{path.name} is stale: run `make manifests`"
    rule = yaml.safe_load((K8S / "monitoring/prometheusrule.yaml").read_text())
    source = yaml.safe_load((K8S.parent / "dashboards/monitor-gateway.rules.yml").read_text())
    assert rule["spec"] == source


def of_kind(documents: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name)


def gateway_container(pod: dict[str, Any]) -> dict[str, Any]:
    containers = pod.get("initContainers", []) + pod["containers"]
    return next(c for c in containers if c["args"] == ["serve"])


@pytest.mark.parametrize("overlay,workload", [("production", "monitor-gateway"),
                                              ("sidecar", "coding-agent")])
def test_the_gateway_drains_before_it_is_killed_and_is_probed_on_health(
    overlay: str, workload: str
) -> None:
    documents = build(K8S / "overlays" / overlay)
    settings = of_kind(documents, "ConfigMap", "monitor-gateway")["data"]
    pod = of_kind(documents, "Deployment", workload)["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] > float(settings["MONITOR_GATEWAY_SHUTDOWN_GRACE"])
    gateway = gateway_container(pod)
    port = next(p for p in gateway["ports"] if p["containerPort"] == int(
        settings["MONITOR_GATEWAY_METRICS_PORT"]))
    # liveness asks only whether a restart would mend anything: not the broker's answer
    for probe, path in (("startupProbe", "/health"), ("readinessProbe", "/health"),
                        ("livenessProbe", "/live")):
        assert gateway[probe]["httpGet"] == {"path": path, "port": port["name"]}
    assert gateway["resources"]["requests"]
    assert {e["secretRef"]["name"] for e in gateway["envFrom"] if "secretRef" in e} == \
        {"monitor-gateway"}
    if overlay == "sidecar":
        assert gateway["restartPolicy"] == "Always"  # a native sidecar
        assert not any(d["kind"] == "Service" for d in documents)


def test_production_judges_with_the_lora_adapter_vllm_serves_and_scales_on_lag() -> None:
    documents = build(K8S / "overlays/production")
    settings = of_kind(documents, "ConfigMap", "monitor-gateway")["data"]
    vllm = of_kind(documents, "Deployment", "vllm-monitor")["spec"]["template"]["spec"]
    args = vllm["containers"][0]["args"]
    assert "--enable-lora" in args
    served = {a.split("=", 1)[1].split("=")[0] for a in args if a.startswith("--lora-modules")}
    assert settings["MONITOR_GATEWAY_MONITOR"] == "openai"
    assert settings["MONITOR_GATEWAY_OPENAI_MODEL"] in served
    service = of_kind(documents, "Service", "vllm-monitor")
    assert settings["MONITOR_GATEWAY_OPENAI_BASE_URL"] == \
        f"http://vllm-monitor:{service['spec']['ports'][0]['port']}/v1"
    [trigger] = of_kind(documents, "ScaledObject", "monitor-gateway")["spec"]["triggers"]
    assert trigger["type"] == "kafka"
    assert trigger["metadata"]["consumerGroup"] == settings["MONITOR_GATEWAY_GROUP_ID"]
    assert trigger["metadata"]["topic"] == settings["MONITOR_GATEWAY_INPUT_TOPIC"]
    monitor = of_kind(documents, "ServiceMonitor", "monitor-gateway")
    gateway_service = of_kind(documents, "Service", "monitor-gateway")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= \
        gateway_service["metadata"]["labels"].items()
    dashboard = of_kind(documents, "ConfigMap", "monitor-gateway-dashboard")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"


def selected(selector: dict[str, str], documents: list[dict[str, Any]], kind: str
             ) -> list[dict[str, Any]]:
    """The objects of ``kind`` whose labels (a pod template's, for a Deployment) match."""
    def labels(d: dict[str, Any]) -> dict[str, str]:
        meta = d["spec"]["template"]["metadata"] if kind == "Deployment" else d["metadata"]
        return dict(meta.get("labels", {}))
    return [d for d in documents if d["kind"] == kind and selector.items() <= labels(d).items()]


def test_each_service_monitor_scrapes_one_service_on_a_port_its_pods_serve() -> None:
    """The gateway, the review service and the guard: one ServiceMonitor each, so each is
    its own job (the Service's name), which the dashboard's $job and $review_job pick."""
    documents = build(K8S / "overlays/production")
    monitors = [d for d in documents if d["kind"] == "ServiceMonitor"]
    scraped = set()
    for monitor in monitors:
        [service] = selected(monitor["spec"]["selector"]["matchLabels"], documents, "Service")
        scraped.add(service["metadata"]["name"])
        ports = {p["name"]: p for p in service["spec"]["ports"]}
        [deployment] = selected(service["spec"]["selector"], documents, "Deployment")
        served = {p["name"] for c in deployment["spec"]["template"]["spec"]["containers"]
                  for p in c.get("ports", [])}
        for endpoint in monitor["spec"]["endpoints"]:
            assert endpoint["path"] == "/metrics"
            assert ports[endpoint["port"]]["targetPort"] in served, monitor["metadata"]["name"]
    assert scraped == {"monitor-gateway", "monitor-gateway-review", "monitor-gateway-guard"}


def container_settings(documents: list[dict[str, Any]], workload: str, kind: type[S]
                       ) -> tuple[dict[str, Any], dict[str, Any], S]:
    """A Deployment's pod, its one container, and the settings the container reads: the
    ConfigMap's, then its own ``env`` over them (every name one of ``kind``'s)."""
    pod = of_kind(documents, "Deployment", workload)["spec"]["template"]["spec"]
    [container] = pod["containers"]
    env = dict(of_kind(documents, "ConfigMap", "monitor-gateway")["data"])
    own = {e["name"]: e["value"] for e in container.get("env", [])}
    assert {n.removeprefix(ENV_PREFIX).lower() for n in own} <= set(kind.model_fields), own
    env |= own
    fields = {name.removeprefix(ENV_PREFIX).lower(): value for name, value in env.items()}
    return pod, container, kind.model_validate(
        {k: v for k, v in fields.items() if k in kind.model_fields})


def test_the_review_service_and_the_guard_run_the_gateways_image_probed_on_their_port(
) -> None:
    documents = build(K8S / "overlays/production")
    image = gateway_container(of_kind(documents, "Deployment", "monitor-gateway")[
        "spec"]["template"]["spec"])["image"]
    _, review, review_settings = container_settings(
        documents, "monitor-gateway-review", ReviewSettings)
    guard_pod, guard, guard_settings = container_settings(
        documents, "monitor-gateway-guard", GuardSettings)
    for container, args, host, port in (
        (review, ["review"], review_settings.review_host, review_settings.review_port),
        (guard, ["guard"], guard_settings.guard_host, guard_settings.guard_port),
    ):
        assert container["image"] == image and container["args"] == args
        assert host == "0.0.0.0"
        [named] = [p["name"] for p in container["ports"] if p["containerPort"] == port]
        for probe, path in (("startupProbe", "/health"), ("readinessProbe", "/health"),
                            ("livenessProbe", "/live")):
            assert container[probe]["httpGet"] == {"path": path, "port": named}
        assert container["resources"]["requests"]
        assert container["securityContext"]["readOnlyRootFilesystem"]
    # the guard judges within its budget: the offline monitor, in as many workers as the
    # cores it asks for; it publishes its waiting decisions before it is killed
    assert guard_settings.monitor == "offline"
    assert guard_settings.workers == int(guard["resources"]["requests"]["cpu"])
    assert guard_pod["terminationGracePeriodSeconds"] > guard_settings.shutdown_grace
    # one review page: reviewers' sessions live in its process
    review_deployment = of_kind(documents, "Deployment", "monitor-gateway-review")
    assert review_deployment["spec"]["replicas"] == 1
    assert review_deployment["spec"]["strategy"]["type"] == "Recreate"
    token = of_kind(documents, "Secret", "monitor-gateway-review")["stringData"]
    assert f"{ENV_PREFIX}REVIEW_TOKEN" in token
    assert {e["secretRef"]["name"] for e in review["envFrom"] if "secretRef" in e} == \
        {"monitor-gateway", "monitor-gateway-review"}
    assert {e["secretRef"]["name"] for e in guard["envFrom"] if "secretRef" in e} == \
        {"monitor-gateway"}  # the reviewers' token stays with the review page


def test_the_review_sampler_runs_alone_and_is_restarted_when_it_exits() -> None:
    """It serves no port: no probe, no scrape; the Deployment restarts it on an error."""
    documents = build(K8S / "overlays/production")
    pod, sampler, settings = container_settings(
        documents, "monitor-gateway-review-sampler", ReviewSettings)
    assert sampler["args"] == ["review-sampler"]
    assert not {"ports", "startupProbe", "readinessProbe", "livenessProbe"} & set(sampler)
    assert pod.get("restartPolicy", "Always") == "Always"
    gateway = of_kind(documents, "ConfigMap", "monitor-gateway")["data"]
    assert settings.verdict_topic == gateway[f"{ENV_PREFIX}VERDICT_TOPIC"]
    assert settings.sampler_group != gateway[f"{ENV_PREFIX}GROUP_ID"]
