"""A real Prometheus (Debian's package) scrapes a running gateway with the recording rules
loaded; a replay streams pairs through; Prometheus's MR and FAR equal the report's."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from kafka_io import running
from monitors import Hashed
from paths import ROOT
from rich.console import Console

from monitor_gateway.embedded import free_port
from monitor_gateway.settings import GatewaySettings
from replay.builtin import build
from replay.harness import run_replay

pytestmark = pytest.mark.kafka

RULES = ROOT / "dashboards" / "monitor-gateway.rules.yml"
JOB = "monitor-gateway"


@contextmanager
def prometheus(tmp_path: Path, target: str) -> Iterator[str]:
    if shutil.which("prometheus") is None:
        pytest.fail("prometheus not found: install Debian's prometheus package (make test does)")
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": [target]}]}],
    }))
    log = (tmp_path / "prometheus.log").open("wb")
    process = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


async def query(http: aiohttp.ClientSession, api: str, promql: str) -> list[dict[str, Any]]:
    try:
        async with http.get(f"{api}/api/v1/query", params={"query": promql}) as response:
            body = await response.json()
    except aiohttp.ClientError:  # not listening yet
        return []
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


async def by_category(http: aiohttp.ClientSession, api: str, promql: str) -> dict[str, float]:
    return {r["metric"]["category"]: float(r["value"][1])
            for r in await query(http, api, f'{promql}{{job="{JOB}"}}')}


async def until(check: Any, timeout: float = 60.0) -> Any:
    """Poll ``check`` (a coroutine function: Prometheus is another process) until it
    returns something truthy, or give its last answer after ``timeout`` seconds."""
    for _ in range(int(timeout / 0.5)):
        if result := await check():
            break
        await asyncio.sleep(0.5)
    return result


async def test_prometheus_far_and_mr_equal_the_replay_report(
    settings: GatewaySettings, tmp_path: Path
) -> None:
    per_category = Counter[str]()
    subset = []
    for sample in build(split="test"):  # 30 pairs of each category
        if per_category[sample.category] < 60:
            per_category[sample.category] += 1
            subset.append(sample)
    settings = settings.model_copy(update={"metrics_port": free_port(),
                                           "metrics_host": "127.0.0.1"})
    async with running(settings, Hashed()), \
            aiohttp.ClientSession() as http:
        with prometheus(tmp_path, f"127.0.0.1:{settings.metrics_port}") as api:
            # every replay counter is scraped at 0 before the first sample is sent
            assert await until(lambda: query(
                http, api, f'monitor_gateway_replay_outcomes_total{{job="{JOB}"}}')), \
                (tmp_path / "prometheus.log").read_text()[-2000:]
            report, _ = await run_replay(settings, subset, dataset="subset",
                                         console=Console(quiet=True), timeout=20)
            expected_far = {c: b["far"] for c, b in report["by_category"].items()}
            expected_mr = {c: b["mr"] for c, b in report["by_category"].items()}

            seen: dict[str, dict[str, float]] = {}

            async def agrees() -> bool:
                seen["far"] = await by_category(
                    http, api, "job_category:monitor_gateway_false_alarm_rate:ratio_rate5m")
                seen["mr"] = await by_category(
                    http, api, "job_category:monitor_gateway_miss_rate:ratio_rate5m")
                return bool(seen["far"] == pytest.approx(expected_far)
                            and seen["mr"] == pytest.approx(expected_mr))

            agreed = await until(agrees)

    assert report["missing"] == 0 and report["n"] == len(subset)
    assert min(expected_far.values()) > 0 and max(expected_far.values()) < 1  # not trivial
    assert agreed, f"Prometheus {seen} != report FAR {expected_far}, MR {expected_mr}"
