"""The Prometheus rules and the Grafana dashboard, checked with the real tools: promtool
runs the rules' unit tests, and every query is parsed to find the metrics it reads."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import Any

import promql_parser
import pytest
import yaml
from paths import ROOT
from prometheus_client import CollectorRegistry

from monitor_gateway.gateway import Gateway
from monitor_gateway.guard import GuardMetrics
from monitor_gateway.monitors import RulesMonitor
from monitor_gateway.settings import GatewaySettings
from review.metrics import ProductionCollector
from review.queue import ReviewQueue
from review.settings import ReviewSettings

DASHBOARDS = ROOT / "dashboards"
RULES = DASHBOARDS / "monitor-gateway.rules.yml"
DASHBOARD = json.loads((DASHBOARDS / "monitor-gateway.json").read_text())
CONTRACT_METRICS = {
    "monitor_gateway_trajectories_total", "monitor_gateway_verdicts_total",
    "monitor_gateway_monitor_latency_seconds_bucket",
    "monitor_gateway_end_to_end_latency_seconds_bucket",
    "monitor_gateway_replay_outcomes_total", "monitor_gateway_evidence_quotes_total",
    "monitor_gateway_inflight",
}


def promtool(*args: str) -> None:
    if shutil.which("promtool") is None:
        pytest.fail("promtool not found: install Debian's prometheus package (make test does)")
    done = subprocess.run(["promtool", *args], cwd=DASHBOARDS, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_rules_are_valid_and_their_unit_tests_pass() -> None:
    promtool("check", "rules", RULES.name)
    promtool("test", "rules", "monitor-gateway.rules.test.yml")


async def exported_names() -> set[str]:
    """Every sample name a gateway's /metrics can show, from its real registry, the
    review service's production estimates and the guard's metrics."""
    registry = CollectorRegistry()
    gateway = Gateway(GatewaySettings(), RulesMonitor(), registry)
    await gateway.publisher.stop()  # never started: nothing is sent
    registry.register(ProductionCollector(ReviewQueue(ReviewSettings())))
    GuardMetrics(registry)
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"),
                "gauge": ("",), "summary": ("_count", "_sum")}
    return {family.name + suffix for family in registry.collect()
            for suffix in suffixes[family.type]}


def rules() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"]
            for rule in group["rules"]]


def recorded_names() -> set[str]:
    return {rule["record"] for rule in rules() if "record" in rule}


def metric_names(query: str) -> set[str]:
    """The metric names a PromQL query reads, Grafana's variables filled in first."""
    query = query.replace("$__rate_interval", "5m")
    query = re.sub(r"\$\{?\w+\}?", ".*", query)
    names: set[str] = set()

    def visit(node: object) -> None:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            names.add(node.name)

    promql_parser.walk(promql_parser.parse(query), visit)
    return names


def panels() -> list[dict[str, Any]]:
    return [p for p in DASHBOARD["panels"] if p["type"] != "row"]


def job_filters(query: str) -> dict[str, set[str]]:
    """Each metric a PromQL query reads -> the values its ``job=~`` matchers compare with,
    Grafana's variables left as written (``$job``)."""
    found: dict[str, set[str]] = {}

    def visit(node: object) -> None:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            found.setdefault(node.name, set()).update(
                m.value for m in node.matchers.matchers
                if m.name == "job" and m.op == promql_parser.MatchOp.Re)

    promql_parser.walk(promql_parser.parse(query.replace("$__rate_interval", "5m")), visit)
    return found


def wrong_job_filters(query: str) -> list[str]:
    """The metrics a panel's query reads without the job variable of the service that
    exports them: the review service's production estimates come from its own scrape job
    (``$review_job``), the guard's metrics from its own (``$guard_job``), everything else
    from the gateway's (``$job``). Recorded series without a job label (the FAR budget)
    need none."""
    wrong = []
    for name, filters in job_filters(query).items():
        if name.startswith("monitor_gateway_production_"):
            wanted = {"$review_job"}
        elif name.startswith("monitor_gateway_guard_"):
            wanted = {"$guard_job"}
        elif ":" not in name or name.startswith("job_"):
            wanted = {"$job"}
        else:
            wanted = set()
        if filters != wanted:
            wrong.append(f"{name}{sorted(filters)}, not {sorted(wanted)}")
    return wrong


def test_metric_names_parses_what_it_should() -> None:
    query = ('histogram_quantile(0.99, sum by (le) (rate(a_bucket{job=~"$job"}'
             '[$__rate_interval]))) / on () group_left () b:c:d')
    assert metric_names(query) == {"a_bucket", "b:c:d"}
    with pytest.raises(ValueError):
        metric_names("sum(rate(a_total[5m])")


async def test_every_query_reads_only_metrics_that_exist() -> None:
    """A renamed metric must break this test, not silently empty a panel or an alert."""
    known = await exported_names() | recorded_names()
    assert known >= CONTRACT_METRICS
    queries = [t["expr"] for p in panels() for t in p["targets"]]
    queries += [rule["expr"] for rule in rules()]
    # Grafana's label_values(metric, label) names a metric, not a query
    queries += [re.sub(r"label_values\((.*), *\w+\)", r"\1", v["definition"])
                for v in DASHBOARD["templating"]["list"] if "definition" in v]
    for query in queries:
        orphans = metric_names(query) - known
        assert not orphans, f"{orphans} in {query}"


async def test_every_gateway_metric_is_on_the_dashboard() -> None:
    shown = set().union(*(metric_names(t["expr"]) for p in panels() for t in p["targets"]))
    recorded = set().union(*(metric_names(r["expr"]) for r in rules() if "record" in r))
    gateway = {n for n in await exported_names()
               if n.startswith("monitor_gateway_") and not n.endswith(("_count", "_sum"))}
    assert gateway <= shown | recorded, gateway - shown - recorded


def test_every_panel_and_query_uses_the_datasource_variable() -> None:
    variables = {v["name"]: v for v in DASHBOARD["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for panel in panels():
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}", panel["title"]
    for job in ("job", "review_job", "guard_job"):
        assert variables[job]["datasource"]["uid"] == "${datasource}"


def test_wrong_job_filters_finds_a_panel_reading_the_wrong_job() -> None:
    assert wrong_job_filters('sum(rate(a_total{job=~"$job"}[$__rate_interval])) / '
                             'monitor_gateway:false_alarm_rate:budget') == []
    assert wrong_job_filters('monitor_gateway_production_labels{category="all"}')
    assert wrong_job_filters('monitor_gateway_production_miss_rate{job=~"$job"}')
    assert wrong_job_filters('monitor_gateway_verdicts_total{job=~"$review_job"}')
    assert wrong_job_filters('monitor_gateway_guard_decisions_total{job=~"$job"}')
    assert wrong_job_filters('job_category:monitor_gateway_miss_rate:ratio_rate5m')


def test_every_panel_reads_the_job_that_exports_its_metrics() -> None:
    """Production estimates come from the review service's job, the guard's metrics from
    the guard's, the rest from the gateway's: each variable lists the jobs that export its
    metrics, and each panel filters on the variable of the metrics it reads."""
    variables = {v["name"]: v for v in DASHBOARD["templating"]["list"]}
    assert re.fullmatch(r"label_values\(monitor_gateway_production_\w+, *job\)",
                        variables["review_job"]["definition"])
    assert re.fullmatch(r"label_values\(monitor_gateway_guard_\w+, *job\)",
                        variables["guard_job"]["definition"])
    assert re.fullmatch(r"label_values\(monitor_gateway_(?!production_|guard_)\w+, *job\)",
                        variables["job"]["definition"])
    for panel in panels():
        for target in panel["targets"]:
            assert not wrong_job_filters(target["expr"]), (panel["title"], target["expr"])
    production = [t["expr"] for p in panels() for t in p["targets"]
                  if "monitor_gateway_production_" in t["expr"]]
    assert len(production) >= 3


def test_the_dashboard_has_the_panels_on_call_needs() -> None:
    titles = {p["title"] for p in panels()}
    assert {"Input rate", "Verdict rate by category", "Flagged ratio",
            "False-alarm rate by category", "Miss rate by category",
            "Monitor latency p50/p95/p99", "End-to-end latency p50/p95/p99", "Errors",
            "Dead letters", "In flight", "Consumer lag"} <= titles
    far = next(p for p in panels() if p["title"] == "False-alarm rate by category")
    assert any("monitor_gateway:false_alarm_rate:budget" in t["expr"] for t in far["targets"])
    latency = [t["expr"] for p in panels() if "latency" in p["title"] for t in p["targets"]]
    for q in ("0.5", "0.95", "0.99"):
        assert sum(f"histogram_quantile({q}," in e for e in latency) == 2


def test_panels_do_not_overlap() -> None:
    taken: set[tuple[int, int]] = set()
    for panel in DASHBOARD["panels"]:
        box = panel["gridPos"]
        cells = {(x, y) for x in range(box["x"], box["x"] + box["w"])
                 for y in range(box["y"], box["y"] + box["h"])}
        assert not cells & taken, panel["title"]
        assert box["x"] + box["w"] <= 24
        taken |= cells


def test_provisioning_points_at_prometheus_and_the_dashboards() -> None:
    sources = yaml.safe_load((DASHBOARDS / "provisioning/datasources.yml").read_text())
    assert sources["datasources"][0]["type"] == "prometheus"
    providers = yaml.safe_load((DASHBOARDS / "provisioning/dashboards.yml").read_text())
    assert providers["providers"][0]["type"] == "file"
