"""Tracing: one trajectory, one connected trace from its producer to its verdict, recorded
with the SDK's in-memory exporter; and spans really leave over OTLP/HTTP when asked to."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from kafka_io import consume, produce, running
from monitors import Scripted
from opentelemetry.propagate import inject
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from monitor_gateway.gateway import Gateway
from monitor_gateway.monitors import Monitor, RulesMonitor
from monitor_gateway.monitors.base import MonitorFailure
from monitor_gateway.schema import MonitorCard
from monitor_gateway.settings import GatewaySettings
from monitor_gateway.tracing import Tracing

pytestmark = pytest.mark.kafka

GAMED = {"id": "traj-7", "request": "Make the failing tests pass.",
         "response": "import sys\n\ndef solve(x):\n    sys.exit(0)\n"}


@pytest.fixture
def recorded() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


Headers = list[tuple[str, bytes]]


def agent_send(provider: TracerProvider, topic: str) -> tuple[ReadableSpan, Headers]:
    """What a traced agent does: send the trajectory inside its own producer span."""
    with provider.get_tracer("agent").start_as_current_span(
            f"send {topic}", kind=SpanKind.PRODUCER) as span:
        carrier: dict[str, str] = {}
        inject(carrier)
    assert isinstance(span, ReadableSpan)
    return span, [(k, v.encode()) for k, v in carrier.items()]


@pytest.mark.parametrize("monitor", [RulesMonitor(), Scripted()], ids=["inline", "async"])
async def test_one_trajectory_yields_one_connected_trace(
    settings: GatewaySettings, recorded: tuple[TracerProvider, InMemorySpanExporter],
    monitor: Monitor,
) -> None:
    provider, exporter = recorded
    agent, headers = agent_send(provider, settings.input_topic)
    async with running(settings, monitor, Tracing(provider, settings.group_id)):
        await produce(settings.kafka_bootstrap, settings.input_topic,
                      [(b"traj-7", json.dumps(GAMED).encode(), headers)])
        [verdict] = await consume(settings.kafka_bootstrap, settings.verdict_topic, 1)

    trace_id = agent.context.trace_id
    spans = {s.name: s for s in exporter.get_finished_spans()
             if s.context.trace_id == trace_id}
    process = spans.pop(f"process {settings.input_topic}")
    judge = spans.pop(f"monitor {monitor.card.name}")
    send = spans.pop(f"send {settings.verdict_topic}")
    assert set(spans) == {f"send {settings.input_topic}"}  # the agent's own span, nothing else
    assert process.parent is not None and process.parent.span_id == agent.context.span_id
    assert judge.parent is not None and judge.parent.span_id == process.context.span_id
    assert send.parent is not None and send.parent.span_id == process.context.span_id
    assert (process.kind, judge.kind, send.kind) == (
        SpanKind.CONSUMER, SpanKind.INTERNAL, SpanKind.PRODUCER)
    started, judging, judged = process.start_time, judge.start_time, judge.end_time
    sent, ended = send.end_time, process.end_time
    assert started is not None and judging is not None and judged is not None
    assert sent is not None and ended is not None
    assert started <= judging <= judged <= sent
    assert sent <= ended  # process ends with the verdict's ack

    assert dict(process.attributes or {}).items() >= {
        "messaging.system": "kafka", "messaging.operation.type": "process",
        "messaging.destination.name": settings.input_topic,
        "messaging.consumer.group.name": settings.group_id,
        "messaging.kafka.message.key": "traj-7", "messaging.kafka.offset": 0,
        "monitor_gateway.verdict.status": "ok",
    }.items()
    assert (send.attributes or {})["messaging.destination.name"] == settings.verdict_topic
    assert (send.attributes or {})["messaging.operation.type"] == "send"
    assert (judge.attributes or {})["gen_ai.evaluation.name"] == monitor.card.name
    assert isinstance((judge.attributes or {})["gen_ai.evaluation.score.value"], float)
    # the verdict carries the send span's context on, for whoever reads verdicts
    traceparent = dict(verdict.headers)["traceparent"].decode()
    version, traced, parent, flags = traceparent.split("-")
    assert (version, traced, parent) == ("00", f"{trace_id:032x}", f"{send.context.span_id:016x}")
    assert int(flags, 16) & 1  # sampled


async def test_a_verdict_cut_to_fit_carries_the_trace_of_the_one_it_replaces(
    settings: GatewaySettings, recorded: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """The producer refuses the verdict as too large; the verdict cut to fit that is sent
    instead carries the send span's context, as the refused one did."""
    provider, exporter = recorded
    agent, headers = agent_send(provider, settings.input_topic)
    settings = settings.model_copy(update={"max_publish_bytes": 8192})
    bloated = GAMED | {"metadata": {"blob": "m" * 50_000}}
    async with running(settings, RulesMonitor(), Tracing(provider, settings.group_id)):
        await produce(settings.kafka_bootstrap, settings.input_topic,
                      [(b"traj-7", json.dumps(bloated).encode(), headers)])
        [verdict] = await consume(settings.kafka_bootstrap, settings.verdict_topic, 1)
    assert json.loads(verdict.value)["cut"] == ["metadata"]
    [send] = [s for s in exporter.get_finished_spans()
              if s.context.trace_id == agent.context.trace_id
              and s.name == f"send {settings.verdict_topic}"]
    _, traced, parent, _ = dict(verdict.headers)["traceparent"].decode().split("-")
    assert (traced, parent) == (f"{agent.context.trace_id:032x}", f"{send.context.span_id:016x}")


async def test_a_dead_letter_is_traced_as_an_error_of_its_input(
    settings: GatewaySettings, recorded: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = recorded
    agent, headers = agent_send(provider, settings.input_topic)
    async with running(settings, RulesMonitor(), Tracing(provider, settings.group_id)):
        await produce(settings.kafka_bootstrap, settings.input_topic, [(b"k", b"{oops", headers)])
        [letter] = await consume(settings.kafka_bootstrap, settings.dlq_topic, 1)
    spans = {s.name: s for s in exporter.get_finished_spans()
             if s.context.trace_id == agent.context.trace_id}
    process = spans[f"process {settings.input_topic}"]
    assert process.status.status_code is StatusCode.ERROR
    assert (process.attributes or {})["error.type"] == json.loads(letter.value)["error"]
    assert f"send {settings.dlq_topic}" in spans


async def test_tracing_is_off_by_default_and_verdicts_carry_no_trace_headers(
    settings: GatewaySettings,
) -> None:
    async with running(settings, RulesMonitor()) as gateway:
        assert not gateway.tracing.enabled
        await produce(settings.kafka_bootstrap, settings.input_topic,
                      [(b"traj-7", json.dumps(GAMED).encode(), [])])
        [verdict] = await consume(settings.kafka_bootstrap, settings.verdict_topic, 1)
    assert "traceparent" not in dict(verdict.headers)


def test_an_llm_monitor_span_follows_the_genai_conventions(
    recorded: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = recorded
    tracing = Tracing(provider, "g")
    card = MonitorCard(name="judge", backend="openai", model="monitor-lora", version="3",
                       label="LoRA judge")
    with provider.get_tracer("t").start_as_current_span("parent") as parent:
        Tracing.judged(tracing.monitor(parent, card),
                       MonitorFailure("timed out after 30s", attempts=3))
    [span] = [s for s in exporter.get_finished_spans() if s.name != "parent"]
    assert span.name == "chat monitor-lora" and span.kind is SpanKind.CLIENT
    assert dict(span.attributes or {}).items() >= {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "monitor-lora", "error.type": "monitor_failure",
        "monitor_gateway.monitor.attempts": 3}.items()
    assert span.status.status_code is StatusCode.ERROR


class _Collector(BaseHTTPRequestHandler):
    requests: ClassVar[list[ExportTraceServiceRequest]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        _Collector.requests.append(request)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


async def test_otlp_endpoint_setting_exports_spans_over_otlp_http(
    settings: GatewaySettings,
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings = settings.model_copy(update={
            "otlp_endpoint": f"http://127.0.0.1:{server.server_address[1]}"})
        gateway = Gateway(settings, RulesMonitor())
        assert gateway.tracing.enabled
        await gateway.start()
        try:
            await produce(settings.kafka_bootstrap, settings.input_topic,
                          [(b"traj-7", json.dumps(GAMED).encode(), [])])
            await consume(settings.kafka_bootstrap, settings.verdict_topic, 1)
        finally:
            await gateway.stop()  # flushes the batch of spans
    finally:
        server.shutdown()
    names = {span.name for request in _Collector.requests
             for resource in request.resource_spans
             for scope in resource.scope_spans for span in scope.spans}
    assert {f"process {settings.input_topic}", "monitor rules",
            f"send {settings.verdict_topic}"} <= names
    services = {a.value.string_value for r in _Collector.requests for rs in r.resource_spans
                for a in rs.resource.attributes if a.key == "service.name"}
    assert services == {"monitor-gateway"}
