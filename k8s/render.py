"""Render dashboards/ into the monitoring component: the PrometheusRule from the one rules
file, and the Grafana dashboard as a ConfigMap for Grafana's sidecar. `make manifests` runs
this; a test fails when the rendered files are out of date. Never edit them by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "dashboards" / "monitor-gateway.rules.yml"
DASHBOARD = ROOT / "dashboards" / "monitor-gateway.json"
OUT = ROOT / "k8s" / "monitoring"
HEADER = "# Rendered by k8s/render.py from {source}: edit that file, then run `make manifests`.\n"
LABELS = {"app.kubernetes.io/name": "monitor-gateway",
          "app.kubernetes.io/part-of": "monitor-gateway"}


def prometheus_rule() -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "monitor-gateway", "labels": LABELS},
        "spec": yaml.safe_load(RULES.read_text()),
    }


def dashboard_config_map() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "monitor-gateway-dashboard",
            # the kube-prometheus-stack Grafana sidecar loads ConfigMaps with this label
            "labels": {**LABELS, "grafana_dashboard": "1"},
            "annotations": {"grafana_folder": "monitor-gateway"},
        },
        "data": {DASHBOARD.name: json.dumps(json.loads(DASHBOARD.read_text()), indent=1)},
    }


def rendered() -> dict[Path, str]:
    """Each output file and its text."""
    return {
        OUT / "prometheusrule.yaml": HEADER.format(source="dashboards/" + RULES.name)
        + yaml.safe_dump(prometheus_rule(), sort_keys=False, width=100),
        OUT / "grafana-dashboard.yaml": HEADER.format(source="dashboards/" + DASHBOARD.name)
        + yaml.safe_dump(dashboard_config_map(), sort_keys=False, width=100),
    }


if __name__ == "__main__":
    for path, text in rendered().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)
