"""OpenTelemetry tracing: one trace per trajectory, from its producer to its verdict.

Off unless ``OTLP_ENDPOINT`` is set (or a tracer provider is handed in, as tests do). The
producer's W3C ``traceparent`` header, when present, parents the gateway's *process* span;
the monitor call and the verdict's *send* are its children, and the verdict carries the
send span's context on in its own headers, so a verdict's reader continues the same trace.
Attributes follow OpenTelemetry's messaging and GenAI semantic conventions. Disabled, every
method is a check and a return: the hot path pays nothing else.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.propagate import extract, inject
from opentelemetry.trace import Span, SpanKind, StatusCode, TracerProvider

from .monitors.base import Delegated, Judgement, MonitorFailure
from .publish import Outgoing
from .schema import MonitorCard, Verdict
from .settings import GatewaySettings, SettingsError

if TYPE_CHECKING:
    from aiokafka import ConsumerRecord

# W3C trace context; replaced, not repeated, when a verdict is sent again
_CONTEXT_HEADERS = ("traceparent", "tracestate")
# backends that call a language model: their monitor span is a GenAI client span
_LLM_BACKENDS = {"openai": "openai"}


class Tracing:
    def __init__(self, provider: TracerProvider | None, group_id: str, *,
                 owned: bool = False) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer("monitor_gateway", version("monitor-gateway")) \
            if provider is not None else None
        self._group = group_id
        self._owned = owned

    @property
    def enabled(self) -> bool:
        return self._tracer is not None

    def consume(self, record: ConsumerRecord[bytes, bytes]) -> Span | None:
        """The *process* span of one input record, a child of its producer's context."""
        if self._tracer is None:
            return None
        carrier = {k: v.decode("latin-1") for k, v in record.headers
                   if k in _CONTEXT_HEADERS and v is not None}
        attributes: dict[str, Any] = {
            "messaging.system": "kafka",
            "messaging.operation.type": "process",
            "messaging.operation.name": "process",
            "messaging.destination.name": record.topic,
            "messaging.destination.partition.id": str(record.partition),
            "messaging.consumer.group.name": self._group,
            "messaging.kafka.offset": record.offset,
            "messaging.message.body.size": len(record.value or b""),
        }
        if record.key is not None:
            attributes["messaging.kafka.message.key"] = record.key.decode("utf-8", "replace")
        return self._tracer.start_span(f"process {record.topic}", context=extract(carrier),
                                       kind=SpanKind.CONSUMER, attributes=attributes)

    def monitor(self, parent: Span | None, card: MonitorCard) -> Span | None:
        """The monitor call: a GenAI client span for an LLM backend."""
        if self._tracer is None or parent is None:
            return None
        attributes: dict[str, Any] = {
            "gen_ai.evaluation.name": card.name,
            "monitor_gateway.monitor.backend": card.backend,
            "monitor_gateway.monitor.version": card.version,
            "monitor_gateway.monitor.label": card.label,
        }
        provider = _LLM_BACKENDS.get(card.backend)
        if provider is not None:
            attributes |= {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider,
                           "gen_ai.system": provider}
            if card.model:
                attributes["gen_ai.request.model"] = card.model
        name = f"chat {card.model}" if provider and card.model else f"monitor {card.name}"
        return self._tracer.start_span(
            name, context=trace.set_span_in_context(parent),
            kind=SpanKind.CLIENT if provider else SpanKind.INTERNAL, attributes=attributes)

    @staticmethod
    def current(span: Span | None) -> AbstractContextManager[object]:
        """Make ``span`` the current one, so a traced HTTP client nests its spans in it."""
        if span is None:
            return nullcontext()
        return trace.use_span(span, end_on_exit=False)

    @staticmethod
    def judged(span: Span | None, outcome: Judgement | MonitorFailure) -> None:
        """End the monitor span with what the monitor said, or why it failed."""
        if span is None:
            return
        if isinstance(outcome, MonitorFailure):
            span.set_status(StatusCode.ERROR, outcome.reason)
            span.set_attribute("error.type", "monitor_failure")
            span.set_attribute("monitor_gateway.monitor.attempts", outcome.attempts)
        else:
            span.set_attribute("gen_ai.evaluation.score.value", outcome.score)
            if isinstance(outcome, Delegated):  # a cascade: the stage that decided
                span.set_attribute("monitor_gateway.monitor.decided_by", outcome.card.name)
        span.end()

    @staticmethod
    def verdict(span: Span | None, verdict: Verdict) -> None:
        if span is None:
            return
        span.set_attribute("monitor_gateway.verdict.status", verdict.status)
        span.set_attribute("monitor_gateway.verdict.flagged", verdict.flagged)
        if verdict.category is not None:
            span.set_attribute("monitor_gateway.verdict.category", verdict.category)

    @staticmethod
    def rejected(span: Span | None, error: str) -> None:
        """The input was not a trajectory: it goes to the dead-letter topic."""
        if span is not None:
            span.set_status(StatusCode.ERROR, error)
            span.set_attribute("error.type", error)

    def publish(self, parent: Span | None, message: Outgoing) -> tuple[Span | None, Outgoing]:
        """The *send* span of a verdict or dead letter, and the message carrying its context."""
        if self._tracer is None or parent is None:
            return None, message
        attributes: dict[str, Any] = {
            "messaging.system": "kafka",
            "messaging.operation.type": "send",
            "messaging.operation.name": "send",
            "messaging.destination.name": message.topic,
            "messaging.message.body.size": len(message.value),
        }
        if message.key is not None:
            attributes["messaging.kafka.message.key"] = message.key.decode("utf-8", "replace")
        span = self._tracer.start_span(f"send {message.topic}",
                                       context=trace.set_span_in_context(parent),
                                       kind=SpanKind.PRODUCER, attributes=attributes)
        carrier: dict[str, str] = {}
        inject(carrier, context=trace.set_span_in_context(span))
        return span, _carrying(message, [(k, v.encode("latin-1")) for k, v in carrier.items()])

    @staticmethod
    def end(span: Span | None, error: str | None = None) -> None:
        if span is None:
            return
        if error is not None:
            span.set_status(StatusCode.ERROR, error)
        span.end()

    def shutdown(self) -> None:
        """Flush and stop the exporter this gateway started."""
        if self._owned and self.provider is not None:
            self.provider.shutdown()  # type: ignore[attr-defined]


def _carrying(message: Outgoing, context: list[tuple[str, bytes]]) -> Outgoing:
    """The message with the trace context in its headers; so is any smaller message sent
    in its place (a verdict cut to fit, or its dead letter), which the same send span
    covers."""
    headers = [h for h in message.headers if h[0] not in _CONTEXT_HEADERS] + context
    if message.smaller is None:
        return message._replace(headers=headers)
    smaller = message.smaller

    def instead() -> Outgoing | None:
        replacement = smaller()
        return None if replacement is None else _carrying(replacement, context)

    return message._replace(headers=headers, smaller=instead)


def from_settings(settings: GatewaySettings) -> Tracing:
    """Tracing to ``OTLP_ENDPOINT`` over OTLP/HTTP, or disabled when it is unset."""
    if not settings.otlp_endpoint:
        return Tracing(None, settings.group_id)
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise SettingsError("needs the tracing extra: pip install 'monitor-gateway[otel]'",
                            "otlp_endpoint") from None
    provider = SdkTracerProvider(resource=Resource.create({"service.name": "monitor-gateway"}))
    endpoint = settings.otlp_endpoint.rstrip("/") + "/v1/traces"
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return Tracing(provider, settings.group_id, owned=True)
