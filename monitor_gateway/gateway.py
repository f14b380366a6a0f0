"""The running gateway: the app that wires the parts and runs their lifecycle.

FastStream's batch subscriber hands over fetched records. The committer registers each
batch, the pipeline turns each record into its outcome (a verdict or a dead letter), the
publisher sends it until the broker has it, and then the committer may commit past it.
A synchronous monitor judges on the fetch loop; an asynchronous one gets a task, so a slow
call never blocks the records behind it, in any partition. ``MAX_PENDING`` bounds all
fetched records not yet acknowledged. Background loops (commits and lag, following the
monitor backend, watching the broker) are supervised: one that dies is restarted, and
``/health`` answers 503 meanwhile.

With ``CONSUME_STEPS``, the same consumer reads runs sent step by step (``runs``): a
step's record is held by its run, each step judged as it arrives (a step verdict when it
flags), and the run judged whole at its end; its records are finished only once every
verdict of it is acknowledged, so commits never pass an open run's start.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import time
from collections.abc import Coroutine
from typing import Any

from aiohttp import web
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaConnectionError
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from faststream.kafka.message import FAKE_CONSUMER
from faststream.kafka.message import KafkaMessage as KafkaStreamMessage
from faststream.kafka.prometheus import KafkaPrometheusMiddleware
from faststream.message import StreamMessage
from faststream.middlewares import AckPolicy
from prometheus_client import CollectorRegistry

from .breaker import CircuitBreaker
from .calling import Backend
from .client import reach
from .committer import Committer
from .config import load_config
from .ingest import Rejection
from .limits import Limiter
from .logs import BrokerOutage
from .metrics import Metrics, serve_http
from .monitors.base import Closeable, InlineMonitor, Monitor, MonitorFailure
from .monitors.pool import Judged, PooledMonitor
from .observe import Observer
from .offsets import OffsetTracker, Ticket
from .pipeline import Pipeline, Work
from .policy import Policy
from .publish import Outgoing, Publisher
from .runs import Duplicate, Ended, OpenRun, Runs
from .schema import Trajectory
from .settings import GatewaySettings
from .supervise import Supervisor
from .tracing import Tracing, from_settings

log = logging.getLogger(__name__)


def raw_batch(records: tuple[ConsumerRecord[bytes, bytes], ...]) -> KafkaStreamMessage:
    """FastStream's parser for the input batch. Its own decodes every header value as
    strict UTF-8 and drops the whole batch on the first that is not; and it reads
    ``reply_to`` from the headers, which would let any producer make the gateway publish
    to a topic of its choosing. This one decodes nothing and never fails: ingest reads
    each record, tolerantly, once."""
    first, last = records[0], records[-1]
    return KafkaStreamMessage(
        body=[record.value or b"" for record in records],  # sizes for the Prometheus middleware
        headers={},
        reply_to="",
        message_id=f"{first.offset}-{last.offset}-{first.timestamp}",
        raw_message=records,
        consumer=FAKE_CONSUMER,  # never used: AckPolicy.MANUAL, offsets are ours
    )


class StartupError(RuntimeError):
    """The gateway cannot start; its message is one line naming the setting to change."""


class Gateway:
    def __init__(
        self,
        settings: GatewaySettings,
        monitor: Monitor,
        registry: CollectorRegistry | None = None,
        tracing: Tracing | None = None,
    ) -> None:
        self.settings = settings
        self.monitor = monitor
        self.registry = registry or CollectorRegistry()
        self.metrics = Metrics(self.registry)
        self.tracing = tracing or from_settings(settings)
        self.policy = Policy.build(settings, load_config(settings.monitor_config))
        # the backend's limiter bounds monitor calls (CONCURRENCY is its ceiling; fixed for
        # worker processes, whose latency is their queue: the more records they are given
        # at a time, the fewer hand-offs, so at least enough records for every worker's
        # two full batches); MAX_PENDING bounds everything fetched and not yet acknowledged
        local = isinstance(monitor, InlineMonitor | PooledMonitor)
        ceiling = max(settings.concurrency,
                      monitor.room if isinstance(monitor, PooledMonitor) else 0)
        self.backend = Backend(
            Limiter(ceiling,
                    adaptive=settings.adaptive_concurrency and not local,
                    on_change=self.metrics.concurrency_limit.set),
            CircuitBreaker(threshold=settings.breaker_failures, budget=settings.outage_budget,
                           wait=settings.outage_policy == "wait"),
        )
        self.pipeline = Pipeline(settings, monitor, self.policy, self.backend,
                                 Observer(self.metrics, self.tracing, monitor.card.backend))
        self.committer = Committer(self._consumer, self.metrics, settings.commit_interval)
        self.publisher = Publisher(settings)
        self.supervisor = Supervisor(on_death=lambda _: self.metrics.internal_errors.inc())
        self._pending = asyncio.Semaphore(max(settings.max_pending, ceiling))
        self._tasks: set[asyncio.Task[None]] = set()
        self._stuck: set[Ticket] = set()  # records a fault of ours left without an outcome
        self._paused = False
        self._draining = False
        # the broker's outage: one line each way and a reminder, the client's own held back
        self._broker_outage = BrokerOutage(
            settings.kafka_bootstrap, log, settings.broker_reminder,
            held=self.metrics.kafka_client_errors_held.inc,
            checked=lambda answered: self.metrics.broker_available.set(1 if answered else 0))
        self._http: web.AppRunner | None = None

        middlewares: list[Any] = [
            KafkaPrometheusMiddleware(registry=self.registry, app_name="monitor-gateway")]
        if self.tracing.enabled:  # a span for each fetched batch, linked to its records' traces
            from faststream.kafka.opentelemetry import KafkaTelemetryMiddleware

            middlewares.append(KafkaTelemetryMiddleware(tracer_provider=self.tracing.provider))
        self.broker = KafkaBroker(
            settings.kafka_bootstrap,
            security=settings.security(),
            middlewares=middlewares,
            logger=logging.getLogger("monitor_gateway.kafka"),
            log_level=logging.DEBUG,  # FastStream's per-message lines; ours are INFO
            graceful_timeout=settings.shutdown_grace,
        )
        # runs sent step by step (issue 36), when CONSUME_STEPS: same group, same offsets
        self.runs = Runs(settings.max_open_runs, settings.max_open_run_bytes,
                         settings.run_timeout, settings.max_message_bytes)
        self.metrics.open_runs.set_function(lambda: len(self.runs.open))
        self.metrics.open_run_bytes.set_function(lambda: self.runs.size)
        topics = [settings.input_topic]
        if settings.consume_steps:
            topics.append(settings.step_topic)
        self._subscriber = self.broker.subscriber(
            *topics,
            group_id=settings.group_id,
            batch=True,
            max_records=settings.fetch_max_records,
            fetch_max_wait_ms=settings.fetch_max_wait_ms,
            ack_policy=AckPolicy.MANUAL,  # never commit on receipt: the committer commits
            no_reply=True,  # the gateway writes to its verdict and dead-letter topics only
            auto_offset_reset=settings.auto_offset_reset,
            listener=self.committer.listener(self._assigned, self.runs.forget),
            max_partition_fetch_bytes=max(1024 * 1024, settings.max_message_bytes + 1024),
        )

        async def on_batch(message: KafkaMessage) -> None:
            records = message.raw_message
            await self._dispatch(records if isinstance(records, tuple) else (records,))

        async def raw(message: StreamMessage[Any]) -> None:
            """No decoding: FastStream would JSON-decode every record; ingest does it once."""

        self._subscriber(on_batch, parser=raw_batch, decoder=raw)

    @property
    def tracker(self) -> OffsetTracker:
        return self.committer.tracker

    def _consumer(self) -> AIOKafkaConsumer | None:
        consumer: AIOKafkaConsumer | None = self._subscriber.consumer
        return consumer

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Bind the metrics port, then connect to Kafka; either failing is a
        :class:`StartupError` naming the setting to change, with nothing left running."""
        settings = self.settings
        if settings.metrics_port:
            try:
                self._http = await serve_http(self.registry, self.healthy, self.alive,
                                              settings.metrics_host, settings.metrics_port)
            except OSError as exc:
                await self.publisher.stop()
                await self._close_monitor()
                raise StartupError(
                    f"cannot serve metrics on {settings.metrics_host}:{settings.metrics_port}: "
                    f"{exc.strerror or exc}; set --metrics-port or MONITOR_GATEWAY_METRICS_PORT "
                    "(0 turns the endpoint off)") from None
        quiet = logging.getLogger("aiokafka")
        level = quiet.level
        quiet.setLevel(logging.CRITICAL)  # its line per failed attempt: ours says it all
        try:
            await reach(settings)  # a listener that is not Kafka: fail now, not in 40 s
            await self.publisher.start()
            await self.broker.start()
        except KafkaConnectionError:
            await self.publisher.stop()
            await self._close_monitor()
            if self._http is not None:
                await self._http.cleanup()
            raise StartupError(settings.unreachable()) from None
        finally:
            quiet.setLevel(level)
        self._broker_outage.install()
        self.supervisor.start("commits", self.committer.run)
        self.supervisor.start("backend", self._follow_backend)
        self.supervisor.start("broker", lambda: self._broker_outage.watch(self.broker.ping))
        if settings.consume_steps:
            self.supervisor.start("runs", self._expire_runs)
        log.info(
            "gateway consuming %s as group %s with monitor %s, concurrency %d; metrics %s",
            settings.input_topic + (f" and runs step by step on {settings.step_topic}"
                                    if settings.consume_steps else ""),
            settings.group_id, self.monitor.card.name,
            settings.concurrency,
            f"on http://{settings.metrics_host}:{settings.metrics_port}/metrics"
            if settings.metrics_port else "off",
        )

    async def _close_monitor(self) -> None:
        if isinstance(self.monitor, Closeable):
            await self.monitor.aclose()

    async def stop(self) -> None:
        """Stop fetching, give in-flight work the grace period, commit what is done, and
        abandon the rest uncommitted: the group's next owner processes it again."""
        self._draining = True
        consumer = self._consumer()
        if consumer is not None:
            consumer.pause(*consumer.assignment())
        deadline = time.monotonic() + self.settings.shutdown_grace
        # records open runs hold wait for steps that will not come now: not waited for
        while self._busy() and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        await self.committer.commit()
        unfinished = self.tracker.in_flight()
        if unfinished:
            log.warning("abandoned %d in-flight records (%d of them in %d open runs), left "
                        "uncommitted", unfinished, self.runs.held(), len(self.runs.open))
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.supervisor.stop()
        await self.broker.stop()
        await self.publisher.stop()
        self._broker_outage.remove()
        await self._close_monitor()
        if self._http is not None:
            await self._http.cleanup()
        await asyncio.to_thread(self.tracing.shutdown)  # flushes spans over the network
        log.info("stopped: every finished trajectory's offset committed; %d abandoned "
                 "uncommitted (the group's next owner judges them again)", unfinished)

    def _busy(self) -> int:
        return self.tracker.in_flight() - self.runs.held()

    async def healthy(self) -> bool:
        """Connected and consuming: the consume loop and every background loop run, the
        broker answers, and no fault of ours has left a record without an outcome."""
        if self._draining or not self._subscriber.running or self._consumer() is None:
            return False
        if self._stuck or not self.supervisor.healthy():
            return False
        return bool(await self.broker.ping(timeout=2.0))

    def alive(self) -> bool:
        """No fault of ours has left a record without an outcome: its partition's commits
        stop there, and only a restart (the group's next owner judging it again) mends
        that. A broker outage, a drain or a loop being restarted are no reason to restart."""
        return not self._stuck

    # --- data path -----------------------------------------------------------------------

    async def _dispatch(self, records: tuple[ConsumerRecord[bytes, bytes], ...]) -> None:
        """Runs on the fetch loop: register the batch, then start each record. Nobody waits
        here for a monitor call or for the broker's ack, only for room (``MAX_PENDING``):
        the fetch loop is the only waiter, so a slow monitor or broker stalls fetching
        instead of piling up work."""
        tickets = self.committer.register(records)
        for record, ticket in zip(records, tickets, strict=True):
            await self._pending.acquire()
            if self._draining:
                self._pending.release()
                return
            work = self.pipeline.receive(record, ticket)
            try:
                if record.topic != self.settings.input_topic:  # the step topic
                    await self._step(work)
                    continue
                outcome = self.pipeline.first(work)
                if not isinstance(outcome, Outgoing):  # to judge: a trajectory, or the record
                    # a slot first, then a task: at most the limit's worth of tasks exist,
                    # and the fetch loop waits here (the only waiter) when all are busy
                    slot = self.backend.limiter.try_acquire()
                    if slot is None:
                        slot = await self.backend.limiter.acquire()
                    self._spawn(self._judge(work, outcome, slot))
                else:
                    await self._send(outcome, work)
            except Exception as exc:  # a bug of ours: loud, counted, and the record still ends
                await self._fault(work, exc)

    async def _judge(self, work: Work, trajectory: Trajectory | None, slot: bool) -> None:
        try:
            await self._send(await self.pipeline.judge(work, trajectory, slot), work)
        except Exception as exc:
            await self._fault(work, exc)

    async def _step(self, work: Work) -> None:
        """A step topic's record: held in its run (its offset committed only with the run's
        final verdict), skipped as a duplicate, or dead-lettered. A step that flags has its
        step verdict published at once; a run's end, or a bound, closes it for judging."""
        received, evicted = self.runs.receive(work)
        for run in evicted:
            self._close(run)
        if isinstance(received, Rejection):
            self.metrics.step_messages.inc("invalid")
            await self._send(self.pipeline.dead_letter(work, received), work)
            return
        self._pending.release()  # held records are bounded by the open runs' bounds
        self.pipeline.observer.sent(work.span, None)
        if isinstance(received, Duplicate):
            self.metrics.step_messages.inc("duplicate")
            self.committer.done(work.ticket)
        elif isinstance(received, Ended):
            self.metrics.step_messages.inc("ended")
            self._close(received.run)
        else:
            self.metrics.step_messages.inc("held")
            if received.step is None:
                return
            try:
                await self._judge_step(received.run, work, received.step)
            except Exception:  # the record is its run's now: the run's end decides
                log.exception("cannot judge step %d of run %r", received.step, received.run.id)
                self.pipeline.observer.fault()

    async def _judge_step(self, run: OpenRun, work: Work, index: int) -> None:
        """A step judged alone on the fetch loop (a monitor with a step-wise call), or the
        run so far on a task of its own (a monitor without one, when the settings ask)."""
        if self.pipeline.stepwise is None:
            if self._judges_so_far(run, index):
                run.judged_so_far += 1
                run.unacknowledged += 1
                self._spawn(self._judge_so_far(run, work, run.trajectory(), index))
            return
        start = run.start
        message = self.pipeline.judge_step(work, run.id, start.request, run.steps, index,
                                           start.metadata)
        if message is not None:
            run.unacknowledged += 1
            await self._publish_step(run, message, index)

    def _judges_so_far(self, run: OpenRun, index: int) -> bool:
        settings = self.settings
        if run.judged_so_far >= settings.step_judge_budget:
            return False
        return bool(settings.step_judge_tool_calls and run.steps[index].tool_calls) or bool(
            settings.step_judge_every and (index + 1) % settings.step_judge_every == 0)

    async def _judge_so_far(self, run: OpenRun, work: Work, so_far: Trajectory,
                            index: int) -> None:
        try:
            message = await self.pipeline.judge_so_far(work, so_far)
        except Exception:  # an early warning lost; the run's end still decides
            log.exception("cannot judge run %r so far", run.id)
            self.pipeline.observer.fault()
            message = None
        if message is None:
            run.unacknowledged -= 1
            self._finished(run)
            return
        await self._publish_step(run, message, index)

    async def _publish_step(self, run: OpenRun, message: Outgoing, index: int) -> None:
        """A step verdict (counted in ``run.unacknowledged`` by the caller) sent; the run's
        first flag observed."""
        if run.flagged_step is None:
            run.flagged_step = index
            self.metrics.time_to_flag.observe(time.perf_counter() - run.opened.started)
            self.metrics.steps_to_flag.observe(index + 1)

        def acknowledged(sent: Outgoing) -> None:
            run.unacknowledged -= 1
            self._acknowledged(sent, run)

        await self.publisher.send(message, acknowledged)

    def _close(self, run: OpenRun) -> None:
        """Judge a run closed by its end or by a bound, as a whole, on a task of its own."""
        self.metrics.runs_closed.inc(run.incomplete or "complete")
        self._spawn(self._judge_run(run))

    async def _judge_run(self, run: OpenRun) -> None:
        work = run.works[-1]
        try:
            trajectory: Trajectory | Judged = run.trajectory()
        except ValueError:  # an incomplete run without a step
            trajectory = Judged(run.id, run.start.task_type, run.start.metadata, MonitorFailure(
                f"incomplete run ({run.incomplete}) with nothing to judge", attempts=0), [])
        try:
            outcome = await self.pipeline.judge_run(work, trajectory, run.incomplete)
        except Exception as exc:
            outcome = self.pipeline.fault(work, exc)

        def acknowledged(sent: Outgoing) -> None:
            run.final_acknowledged = True
            self._acknowledged(sent, run)

        await self.publisher.send(outcome, acknowledged)

    def _acknowledged(self, sent: Outgoing, run: OpenRun) -> None:
        """One of a run's verdicts acknowledged; once all are (its final verdict and every
        step verdict), its records may be committed past."""
        self._count(sent)
        self._finished(run)

    def _count(self, sent: Outgoing) -> None:
        """A message's own acknowledgement (its metrics): it must never keep a record or a
        run from finishing."""
        if sent.acknowledged is not None:
            try:
                sent.acknowledged()
            except Exception:
                log.exception("cannot count an acknowledged message")
                self.pipeline.observer.fault()

    def _finished(self, run: OpenRun) -> None:
        if run.finished and not run.released:
            run.released = True
            for work in run.works:
                self.committer.done(work.ticket)

    async def _fault(self, work: Work, exc: Exception) -> None:
        """If even the dead letter cannot be made or sent, the record stays unfinished: its
        partition's commits stop there and ``/health`` answers 503."""
        self._stuck.add(work.ticket)
        try:
            await self._send(self.pipeline.fault(work, exc), work)
        except Exception:
            log.exception("cannot dead-letter %s/%d/%d either; its partition's commits wait "
                          "for a restart", work.record.topic, work.record.partition,
                          work.record.offset)

    async def _send(self, message: Outgoing, work: Work) -> None:
        span, message = self.pipeline.observer.sending(work.span, message)

        def acknowledged(sent: Outgoing) -> None:
            self.pipeline.observer.sent(work.span, span)
            self._count(sent)
            self.committer.done(work.ticket)
            self._stuck.discard(work.ticket)
            self._pending.release()

        await self.publisher.send(message, acknowledged)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- background loops ----------------------------------------------------------------

    async def _follow_backend(self) -> None:
        """Stop fetching while the monitor backend is out and the outage is waited for
        (records wait uncommitted and lag grows, so the lag alert fires); fetch again once
        it answers, or once the outage budget is spent and the fail policy applies."""
        while True:
            await asyncio.sleep(self.settings.commit_interval)
            consumer = self._consumer()
            hold = self.backend.breaker.holding() and not self._draining
            if consumer is None or hold == self._paused:
                continue
            self._paused = hold
            if hold:
                consumer.pause(*consumer.assignment())
            else:
                consumer.resume(*consumer.assignment())
            self.metrics.backend_available.set(0 if hold else 1)

    def _assigned(self, assigned: set[TopicPartition]) -> None:
        consumer = self._consumer()
        if self._paused and consumer is not None:  # still waiting out an outage
            consumer.pause(*assigned)

    async def _expire_runs(self) -> None:
        """Judge each run silent past ``RUN_TIMEOUT`` as incomplete."""
        while True:
            await asyncio.sleep(min(1.0, self.settings.run_timeout / 4))
            for run in self.runs.expired():
                self._close(run)


# young container objects a fetched record holds until its outcome is acknowledged (its
# work, verdict, closures and futures: 18-25 measured on the realistic set), with room
YOUNG_PER_RECORD = 50


def tune_gc(max_pending: int = GatewaySettings.model_fields["max_pending"].default) -> None:
    """Freeze what start-up allocated and collect young objects less often. The cyclic
    collector rescanning the long-lived heap cost about 40% of the per-record time
    (benchmarks/throughput.py); records' own objects die by reference counting anyway.
    The young generation's threshold exceeds what ``max_pending`` records in flight hold:
    below it, every turnover of the in-flight records set off a collection that traversed
    all of them (22 ms each with 4,096 in flight, about 10 us a record with ``rules``)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(max(50_000, YOUNG_PER_RECORD * max_pending), 20, 100)


async def run_until_signalled(settings: GatewaySettings, monitor: Monitor,
                              tracing: Tracing | None = None) -> None:
    """``serve``: run until SIGTERM or SIGINT, then drain within the grace period."""
    gateway = Gateway(settings, monitor, tracing=tracing)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await gateway.start()
    tune_gc(settings.max_pending)
    try:
        await stop.wait()
    finally:
        log.info("stopping: draining in-flight work for up to %gs",
                 gateway.settings.shutdown_grace)
        with contextlib.suppress(asyncio.CancelledError):
            await gateway.stop()

