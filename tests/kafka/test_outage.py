"""A monitor backend outage is waited out: the LLM judge's server process is killed
mid-stream and restarted 10 s later on the same port; every trajectory is judged once it is
back, none gets an error verdict, and fetching pauses meanwhile."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from kafka_io import Record, committed, consume, produce, running
from paths import ROOT

from monitor_gateway.embedded import free_port
from monitor_gateway.monitors.llm import LLMJudge, LLMSettings
from monitor_gateway.settings import GatewaySettings

pytestmark = pytest.mark.kafka
pytest.importorskip("openai", reason="needs the llm extra")

SERVER = ROOT / "benchmarks" / "llm_throughput.py"


def start_server(port: int) -> subprocess.Popen[bytes]:
    """The benchmarks' OpenAI-compatible stub: a separate process, 50 ms a call."""
    process = subprocess.Popen([sys.executable, str(SERVER), "--serve", str(port),
                                "--latency", "0.05"], cwd=SERVER.parent)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1)
        except urllib.error.HTTPError:
            return process  # answering (404 for this path)
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the stub server did not start")


async def test_a_backend_outage_is_waited_out_not_passed_unjudged(
    settings: GatewaySettings,
) -> None:
    port = free_port()
    server = start_server(port)
    settings = settings.model_copy(update={
        "monitor": "openai", "concurrency": 4, "adaptive_concurrency": False,
        "monitor_timeout": 2.0})
    llm = LLMSettings(openai_base_url=f"http://127.0.0.1:{port}/v1", openai_model="stub",
                      structured_output="none", openai_logprobs=False)
    n = 600
    records: list[Record] = [(f"t{i}".encode(),
                json.dumps({"id": f"t{i}", "request": "q", "response": "a"}).encode(), [])
               for i in range(n)]
    try:
        async with running(settings, LLMJudge(settings, llm)) as gateway:
            await produce(settings.kafka_bootstrap, settings.input_topic, records)
            await consume(settings.kafka_bootstrap, settings.verdict_topic, 60)
            server.kill()  # mid-stream: 4 calls at 50 ms, 80/s, 600 take 7.5 s
            server.wait()
            await asyncio.sleep(3.0)
            paused = gateway.registry.get_sample_value("monitor_gateway_backend_available")
            healthy_meanwhile = await gateway.healthy()
            await asyncio.sleep(7.0)
            server = start_server(port)
            verdicts = await consume(settings.kafka_bootstrap, settings.verdict_topic, n,
                                     timeout=60)
            await asyncio.sleep(0.5)
            positions = await committed(settings.kafka_bootstrap, settings.group_id,
                                        settings.input_topic)
    finally:
        server.kill()
        server.wait()

    judged = {json.loads(r.value)["trajectory_id"]: json.loads(r.value) for r in verdicts}
    assert len(judged) == n  # every trajectory judged...
    assert [v["error"] for v in judged.values() if v["status"] != "ok"] == []  # ...none unjudged
    assert paused == 0  # fetching stopped while the backend was out
    assert healthy_meanwhile  # the gateway itself is fine: lag shows the outage, not /health
    assert sum(p or 0 for p in positions.values()) == n
