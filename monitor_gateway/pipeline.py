"""One record in, one outgoing message out: ingest, monitor, evidence, decision, verdict.

The pipeline knows nothing of consumers, commits or sending: it turns a fetched record into
the message that is its outcome (a verdict, or a dead letter with the reason), and tells the
observer what happened on the way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

from aiokafka import ConsumerRecord
from opentelemetry.trace import Span

from .calling import Backend, Deadlines, RetryPolicy, call_backend, call_monitor, judge_inline
from .evidence import ground, ground_in
from .ingest import Rejection, dead_letter, parse_trajectory, read_replay
from .monitors.base import (
    Delegated,
    InlineMonitor,
    Judgement,
    Monitor,
    MonitorFailure,
    StepMonitor,
)
from .monitors.pool import Judged, PooledMonitor
from .observe import Observer
from .offsets import Ticket
from .policy import Policy
from .publish import Outgoing
from .schema import (
    Evidence,
    Incomplete,
    Latency,
    MonitorCard,
    Step,
    StepVerdict,
    Trajectory,
    Verdict,
    utcnow,
)
from .settings import GatewaySettings
from .verdict import build_verdict, fit

log = logging.getLogger(__name__)

# room for the key, headers and record framing around a verdict's JSON
ENVELOPE = 2048


class Work(NamedTuple):
    """One input record on its way through: where it came from, when, and its trace."""

    record: ConsumerRecord[bytes, bytes]
    ticket: Ticket
    received_at: datetime
    started: float
    span: Span | None


class Pipeline:
    def __init__(self, settings: GatewaySettings, monitor: Monitor, policy: Policy,
                 backend: Backend, observer: Observer) -> None:
        self.settings = settings
        self.monitor = monitor
        self.policy = policy
        self.backend = backend
        self.observer = observer
        self.inline = monitor if isinstance(monitor, InlineMonitor) else None
        self.pool = monitor if isinstance(monitor, PooledMonitor) else None
        # what judges a run's steps as they arrive (issue 36): the monitor, or the one a
        # pool of workers judges with; None: runs are judged only at their end
        inner = self.pool.inner if self.pool is not None else monitor
        self.stepwise = inner if isinstance(inner, StepMonitor) else None
        self.retry = RetryPolicy(timeout=settings.monitor_timeout,
                                 retries=settings.monitor_retries, backoff=settings.retry_backoff)
        self.deadlines = Deadlines(resolution=min(0.05, settings.monitor_timeout / 4))

    def receive(self, record: ConsumerRecord[bytes, bytes], ticket: Ticket) -> Work:
        return Work(record, ticket, utcnow(), time.perf_counter(), self.observer.received(record))

    def first(self, work: Work) -> Outgoing | Trajectory | None:
        """The dead letter of a record that is no trajectory; with an inline monitor (pure
        computation) the verdict, judged right here; otherwise the trajectory, for
        :meth:`judge`, or None with worker processes, which parse the record themselves."""
        if self.pool is not None:
            return None
        parsed = parse_trajectory(work.record.value, self.settings.max_message_bytes)
        if isinstance(parsed, Rejection):
            return self.dead_letter(work, parsed)
        if self.inline is None:
            return parsed
        span = self.observer.judging(work.span, self.monitor.card)
        outcome = judge_inline(self.inline, parsed)
        self.observer.judged(span, outcome)
        return self.verdict(work, parsed, outcome, time.perf_counter() - work.started)

    async def judge(self, work: Work, trajectory: Trajectory | None, slot: bool | None = None
                    ) -> Outgoing:
        """An asynchronous monitor's call (None: the record, to worker processes), within
        the backend's limit (in ``slot``, when the caller holds one) and breaker."""
        span = self.observer.judging(work.span, self.monitor.card)
        if trajectory is None:
            return await self._in_workers(work, span, slot)
        with self.observer.current(span):
            outcome, seconds = await call_monitor(self.monitor, trajectory, self.retry,
                                                  self.deadlines, self.backend, slot)
        self.observer.judged(span, outcome)
        return self.verdict(work, trajectory, outcome, seconds)

    async def judge_run(self, work: Work, trajectory: Trajectory | Judged,
                        incomplete: Incomplete | None) -> Outgoing:
        """A run sent step by step, judged whole at its end as the same trajectory sent
        whole is (``work``: its last record). A :class:`Judged` is an incomplete run with
        nothing to judge, its failure already decided."""
        if isinstance(trajectory, Judged):
            return self.verdict(work, trajectory, trajectory.outcome, 0.0, incomplete)
        span = self.observer.judging(work.span, self.monitor.card)
        if self.pool is not None:
            return await self._in_workers(work, span, None,
                                          trajectory.model_dump_json().encode(), incomplete)
        if self.inline is not None:
            began = time.perf_counter()
            outcome: Judgement | MonitorFailure = judge_inline(self.inline, trajectory)
            seconds = time.perf_counter() - began
        else:
            with self.observer.current(span):
                outcome, seconds = await call_monitor(self.monitor, trajectory, self.retry,
                                                      self.deadlines, self.backend)
        self.observer.judged(span, outcome)
        return self.verdict(work, trajectory, outcome, seconds, incomplete)

    def judge_step(self, work: Work, run_id: str, request: str, steps: list[Step], index: int,
                   metadata: dict[str, Any]) -> Outgoing | None:
        """The step verdict of ``steps[index]`` if it flags (None otherwise, and with a
        monitor that judges only whole runs): judged on the fetch loop, its quotes grounded
        in the step's own texts."""
        if self.stepwise is None:
            return None
        started = time.perf_counter()
        try:
            outcome = self.stepwise.judge_step(request, steps, index)
        except Exception:  # a step's judgement is an early warning: the run's end decides
            log.exception("cannot judge step %d of a run", index)
            self.observer.fault()
            return None
        if outcome is None:
            return None
        return self._step_verdict(work, run_id, index, metadata, outcome,
                                  dict(steps[index].texts(index)), self.stepwise.card,
                                  time.perf_counter() - started)

    async def judge_so_far(self, work: Work, so_far: Trajectory) -> Outgoing | None:
        """With a monitor that has no step-wise call (the LLM judge): the run so far
        (``so_far``: its request and steps up to the newest, no response) judged as a
        trajectory, within the backend's limit; the step verdict of its newest step if
        that flags, its quotes grounded anywhere in the run so far. A failed call gives
        none: the run's end decides."""
        outcome, seconds = await call_monitor(self.monitor, so_far, self.retry, self.deadlines,
                                              self.backend)
        if not isinstance(outcome, Judgement):
            log.info("no judgement of run %r so far: %s", so_far.id, outcome.reason)
            return None
        return self._step_verdict(work, so_far.id, len(so_far.steps) - 1, so_far.metadata,
                                  outcome, dict(so_far.texts()), self._card(outcome), seconds)

    def _step_verdict(self, work: Work, run_id: str, index: int, metadata: dict[str, Any],
                      outcome: Judgement, texts: dict[str, str], card: MonitorCard,
                      seconds: float) -> Outgoing | None:
        """The step verdict as a message, if the judgement flags."""
        threshold = self.policy.threshold(outcome.category)
        if not self.policy.flagged(outcome.score, threshold):
            return None
        tag, echoed = read_replay(work.record.headers)
        verdict = StepVerdict(
            trajectory_id=run_id, seq=index + 1, step=index, flagged=True,
            score=outcome.score, threshold=threshold, category=outcome.category,
            severity=outcome.severity, evidence=ground_in(texts, outcome.quotes),
            rationale=outcome.rationale, monitor=self.policy.card(card, threshold),
            replay_run=tag.run if tag else None, metadata=metadata,
            received_at=work.received_at, decided_at=utcnow(),
            latency_ms=Latency(monitor=seconds * 1000,
                               gateway=(time.perf_counter() - work.started) * 1000))
        return Outgoing(self.settings.step_verdict_topic, verdict.model_dump_json().encode(),
                        work.record.key, echoed,
                        partial(self.observer.step_verdict_acknowledged, verdict))

    async def _in_workers(self, work: Work, span: Span | None, slot: bool | None,
                          value: bytes | None = None, incomplete: Incomplete | None = None
                          ) -> Outgoing:
        """The record's bytes (or ``value``: a run's, assembled) parsed, validated and
        judged in a worker. If every attempt failed (the record kills its worker), it is
        parsed here for its error verdict."""
        assert self.pool is not None
        value = work.record.value if value is None else value
        answer, seconds = await call_backend(partial(self.pool.judge_record, value),
                                             self.retry, self.deadlines, self.backend, slot)
        if isinstance(answer, Rejection):
            self.observer.unjudged(span)
            return self.dead_letter(work, answer)
        if isinstance(answer, MonitorFailure):
            self.observer.judged(span, answer)
            parsed = parse_trajectory(value, self.settings.max_message_bytes)
            if isinstance(parsed, Rejection):
                return self.dead_letter(work, parsed)
            return self.verdict(work, parsed, answer, seconds, incomplete)
        self.observer.judged(span, answer.outcome)
        return self.verdict(work, answer, answer.outcome, seconds, incomplete)

    def verdict(self, work: Work, trajectory: Trajectory | Judged,
                outcome: Judgement | MonitorFailure, monitor_seconds: float,
                incomplete: Incomplete | None = None) -> Outgoing:
        """``trajectory``: as parsed here, or as a worker judged it (its quotes grounded);
        ``incomplete``: a run judged without its end, and why."""
        # the replay headers are read here, after the monitor: it never sees them
        tag, echoed = read_replay(work.record.headers)

        def build(outcome: Judgement | MonitorFailure) -> Verdict:
            return build_verdict(
                trajectory, outcome, _evidence(trajectory, outcome), card=self._card(outcome),
                policy=self.policy, tag=tag, received_at=work.received_at,
                monitor_seconds=monitor_seconds,
                gateway_seconds=time.perf_counter() - work.started, incomplete=incomplete)

        try:
            verdict = build(outcome)
        except Exception as exc:  # a bug of ours must cost a verdict's quality, not a record
            log.exception("cannot build the verdict of %r", trajectory.id)
            outcome = MonitorFailure(f"gateway error: {type(exc).__name__}: {exc}", attempts=0)
            verdict = build(outcome)
        self.observer.decided(work.span, verdict)
        produced_at = work.record.timestamp / 1000

        def acknowledged() -> None:
            self.observer.verdict_acknowledged(verdict, tag, trajectory.task_type, outcome,
                                               produced_at, time.time())

        return self._verdict_message(verdict, echoed, work, acknowledged)

    def _card(self, outcome: Judgement | MonitorFailure) -> MonitorCard:
        """The monitor that judged: a cascade names its deciding stage."""
        if isinstance(outcome, Delegated):
            return outcome.card
        return self.monitor.card

    def _verdict_message(self, verdict: Verdict, headers: list[tuple[str, bytes]], work: Work,
                         acknowledged: Callable[[], None]) -> Outgoing:
        """The verdict as a message; if the broker refuses it as too large, it is cut to fit
        (each refusal halves the target), and once nothing is left to cut it becomes a dead
        letter: the partition never stalls on it."""
        value = verdict.model_dump_json().encode()

        def smaller() -> Outgoing | None:
            target = min(self.settings.max_publish_bytes - ENVELOPE, len(value) // 2)
            fitted = fit(verdict, target)
            if fitted is None:
                self.observer.cut("dead_letter")
                return self.dead_letter(work, Rejection(
                    "verdict_too_large",
                    f"the verdict of {verdict.trajectory_id!r} ({len(value)} bytes) was "
                    "refused as too large even without metadata, rationale and evidence"))
            self.observer.cut("cut")
            return self._verdict_message(fitted, headers, work, acknowledged)

        return Outgoing(self.settings.verdict_topic, value, verdict.trajectory_id.encode(),
                        headers, acknowledged, smaller)

    def dead_letter(self, work: Work, why: Rejection, value_max: int | None = None) -> Outgoing:
        """The dead letter as a message; if refused as too large, its copy of the input is
        halved until it fits, then left out (``value_truncated`` says so)."""
        record = work.record
        if value_max is None:
            log.info("dead letter %s at %s/%d/%d: %s", why.error, record.topic,
                     record.partition, record.offset, why.detail)
            self.observer.rejected(work.span, why.error)
        letter = dead_letter(why, topic=record.topic, partition=record.partition,
                             offset=record.offset, key=record.key, value=record.value,
                             **({"value_max": value_max} if value_max is not None else {}))
        kept = len(record.value or b"") if value_max is None else value_max

        def smaller() -> Outgoing | None:
            return self.dead_letter(work, why, kept // 2) if kept else None

        return Outgoing(self.settings.dlq_topic, letter.model_dump_json().encode(), record.key,
                        [], self.observer.dead_letter_acknowledged, smaller)

    def fault(self, work: Work, exc: Exception) -> Outgoing:
        """A fault of the gateway's own on one record: logged with its traceback, counted,
        and the record dead-lettered with the reason."""
        record = work.record
        log.error("internal error on %s/%d/%d", record.topic, record.partition, record.offset,
                  exc_info=exc)
        self.observer.fault()
        return self.dead_letter(work, Rejection(
            "internal_error", f"gateway error: {type(exc).__name__}: {exc}"))


def _evidence(trajectory: Trajectory | Judged, outcome: Judgement | MonitorFailure
              ) -> list[Evidence]:
    """The judgement's quotes found in the trajectory (by the worker that judged it)."""
    if not isinstance(outcome, Judgement):
        return []
    if isinstance(trajectory, Judged):
        return trajectory.evidence
    return ground(trajectory, outcome.quotes)
