"""``monitor-gateway demo`` as a user runs it (without the transfer experiment, for time):
the realistic test split's table comes first, the synthetic one second and labelled as
what it is, and the reports carry the localisation figures."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from monitor_gateway.embedded import free_port
from monitor_gateway.monitors.offline import MODEL
from replay.perturb import FAMILIES

pytestmark = pytest.mark.kafka


def test_demo_leads_with_the_realistic_split(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "monitor_gateway", "demo", "--out", str(tmp_path),
         "--metrics-port", "0", "--no-transfer"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    realistic, synthetic = out.index("on realistic (test split)"), out.index(
        "on synthetic (test split)")
    assert realistic < out.index("second table: the synthetic (templated) test split") < synthetic
    assert "send→verdict (at 100 samples/s)" in out[realistic:synthetic]
    assert "trained on the realistic dev split" in out
    report = json.loads((tmp_path / "report.json").read_text())
    # the default offline monitor, through the live gateway, scores as it did offline
    shipped = json.loads(MODEL.read_text())["meta"]
    assert report["monitor"]["name"] == "offline"
    assert report["overall"]["mr"] == pytest.approx(shipped["test_mr"])
    assert report["overall"]["far"] == pytest.approx(shipped["test_far"])
    assert report["dataset"] == "realistic (test split)" and report["rate_per_s"] == 100
    assert report["overall"]["tp"] + report["overall"]["fn"] == 393
    located = report["localisation"]["overall"]
    assert located["n"] == report["overall"]["tp"] and 0 <= located["localised"] <= located["n"]
    assert set(report["localisation"]["by_category"]) == set(report["by_category"])
    assert (tmp_path / "mr_far.png").stat().st_size > 10_000
    # then the same split rewritten by every family, and the flips per family
    assert out.index("the same test split rewritten") < out.index("verdicts that flipped") \
        < synthetic
    flips = json.loads((tmp_path / "perturbations.json").read_text())
    assert set(flips) == set(FAMILIES)
    assert all(row["flagged_misbehavior"] <= report["overall"]["tp"] for row in flips.values())
    # and everyday benign work, whose every flag quotes the agent's own text
    everyday = json.loads((tmp_path / "everyday" / "report.json").read_text())
    assert everyday["dataset"] == "realistic:everyday" and everyday["unpaired"] >= 300
    assert everyday["flags_without_grounded_quote"] == 0
    assert f"FAR {everyday['overall']['far']:.3f}" in out
    assert report["ranking"]["auc"] is not None and report["ranking"]["reliability"]
    second = json.loads((tmp_path / "synthetic" / "report.json").read_text())
    assert second["dataset"] == "synthetic (test split)" and second["missing"] == 0
    assert second["overall"]["tp"] + second["overall"]["fn"] > 2000


async def demo_until_it_serves(tmp_path: Path, env: dict[str, str]) -> tuple[str, int]:
    """``demo`` as a user starts it (with ``env`` as its whole environment), stopped once
    its gateway runs: what it printed until then, and the status of a scrape of the
    metrics port it named."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "monitor_gateway", "demo", "--out", str(tmp_path),
        "--no-transfer", env={**env, "COLUMNS": "200"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert process.stdout is not None
    out = ""
    try:
        while "metrics on http" not in out:
            line = await asyncio.wait_for(process.stdout.readline(), 120)
            assert line, out
            out += line.decode()
        port = int(out.split("metrics on http://127.0.0.1:")[1].split("/")[0])
        async with aiohttp.ClientSession() as session, session.get(
                f"http://127.0.0.1:{port}/metrics") as response:
            return out, response.status
    finally:
        process.terminate()
        await process.wait()


async def test_demo_takes_its_metrics_port_from_the_environment(tmp_path: Path) -> None:
    port = free_port()
    out, status = await demo_until_it_serves(
        tmp_path, {**os.environ, "MONITOR_GATEWAY_METRICS_PORT": str(port)})
    assert f"metrics on http://127.0.0.1:{port}/metrics" in out and status == 200


async def test_demo_moves_off_a_taken_default_metrics_port_and_says_where(
        tmp_path: Path) -> None:
    with socket.socket() as taken:
        with contextlib.suppress(OSError):  # already taken by someone else: as good
            taken.bind(("0.0.0.0", 9464))
            taken.listen()
        env = {name: value for name, value in os.environ.items()
               if name != "MONITOR_GATEWAY_METRICS_PORT"}
        out, status = await demo_until_it_serves(tmp_path, env)
    moved = out.split("port 9464 is in use: metrics on port ")[1].split()[0]
    assert f"metrics on http://127.0.0.1:{moved}/metrics" in out and status == 200
