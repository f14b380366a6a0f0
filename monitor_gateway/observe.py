"""What the pipeline tells metrics and tracing, at the few points where something happens:
a record arrives, the monitor is called and answers, a verdict or dead letter is made, sent
and acknowledged. The pipeline names the event once; this module knows who listens."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from .metrics import Metrics
from .monitors.base import Delegated, Judgement, MonitorFailure
from .publish import Outgoing
from .schema import MonitorCard, ReplayTag, StepVerdict, TaskType, Verdict
from .tracing import Tracing

if TYPE_CHECKING:
    from aiokafka import ConsumerRecord
    from opentelemetry.trace import Span


class Observer:
    def __init__(self, metrics: Metrics, tracing: Tracing, backend: str) -> None:
        self.metrics = metrics
        self.tracing = tracing
        self._backend = backend

    def received(self, record: ConsumerRecord[bytes, bytes]) -> Span | None:
        """The record's *process* span (None with tracing off)."""
        return self.tracing.consume(record)

    def judging(self, span: Span | None, card: MonitorCard) -> Span | None:
        return self.tracing.monitor(span, card)

    def current(self, span: Span | None) -> AbstractContextManager[object]:
        """The monitor span as the current context, so an LLM call's own spans nest in it."""
        return self.tracing.current(span)

    def judged(self, span: Span | None, outcome: Judgement | MonitorFailure) -> None:
        self.tracing.judged(span, outcome)

    def unjudged(self, span: Span | None) -> None:
        """A worker found the record no trajectory: the monitor span ends without an
        outcome (the record's dead letter says why)."""
        self.tracing.end(span)

    def decided(self, span: Span | None, verdict: Verdict) -> None:
        self.tracing.verdict(span, verdict)

    def rejected(self, span: Span | None, error: str) -> None:
        self.tracing.rejected(span, error)

    def sending(self, span: Span | None, message: Outgoing) -> tuple[Span | None, Outgoing]:
        """The *send* span, and the message carrying its trace context."""
        return self.tracing.publish(span, message)

    def sent(self, record_span: Span | None, send_span: Span | None) -> None:
        self.tracing.end(send_span)
        self.tracing.end(record_span)

    def verdict_acknowledged(self, verdict: Verdict, tag: ReplayTag | None,
                             task_type: TaskType | None, outcome: Judgement | MonitorFailure,
                             produced_at: float, now: float) -> None:
        self.metrics.observe_verdict(verdict, tag, task_type, self._backend)
        if isinstance(outcome, Delegated):
            for backend, seconds in outcome.stages:
                self.metrics.observe_stage(backend, seconds)
        self.metrics.end_to_end_latency.observe(max(0.0, now - produced_at))

    def step_verdict_acknowledged(self, verdict: StepVerdict) -> None:
        self.metrics.step_verdicts.inc(verdict.category or "none")

    def dead_letter_acknowledged(self) -> None:
        self.metrics.trajectories.inc("invalid")

    def fault(self) -> None:
        self.metrics.internal_errors.inc()

    def cut(self, outcome: str) -> None:
        self.metrics.verdicts_cut.labels(outcome=outcome).inc()
