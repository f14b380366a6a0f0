"""The pre-execution guard: before an agent's tool call runs, allow it or block it.

``monitor-gateway guard`` serves ``POST /check``. A request is the run so far and the tool
call its agent proposes (:class:`~.schema.GuardRequest`); the run with the call appended as
its last step is judged by the configured monitor, as the gateway judges a whole run, its
quotes grounded, and the gateway's policy decides (``THRESHOLD``, the monitor config's
thresholds): a flagged verdict blocks the call.

The judgement has ``GUARD_BUDGET`` seconds. An asynchronous monitor (the LLM judge, a
plugin, an inline monitor in worker processes: the offline monitor unless ``WORKERS=0``) is
waited for no longer; an inline monitor judged on the event loop (``WORKERS=0``, or
``rules``) cannot be interrupted, and a judgement of it that came in past the budget is not
used. Past the budget, and on a monitor error or a backend that is down, the answer is an
error verdict, which ``FAIL_POLICY`` blocks (``closed``) or allows (``open``), as it flags
or not the gateway's error verdicts. ``WORKERS`` means what it means to ``serve``: under
other load on the machine, worker processes kept the guard's p99 lower than judging on its
event loop, where one slow judgement holds up every check behind it
(``benchmarks/guard.py``).

Every decision is also published to ``GUARD_TOPIC``, from a background task: the answer
never waits for the broker. While the broker is down, decisions wait in memory (at most
``GUARD_PENDING``; newer ones are then dropped and counted) and are sent once it is back;
decisions waiting when the guard stops are lost. The decision topic is a record, not the
answer: the caller has the answer already. Once the broker has been reached, an outage of
it is three kinds of line, as in the gateway's log (:class:`~.logs.BrokerOutage`): one
when it starts, a reminder every ``BROKER_REMINDER`` seconds, one when it ends; the Kafka
client's own line for every failed attempt is held back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator

from aiohttp import web
from aiokafka.errors import KafkaError
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge
from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric
from pydantic import ValidationError

from .calling import UNAVAILABLE, _describe, _judged, judge_inline
from .evidence import ground
from .gateway import tune_gc
from .ingest import Rejection, parse, summarise
from .logs import BrokerOutage, Outage
from .metrics import Distribution, Tally
from .monitors.base import Closeable, Delegated, InlineMonitor, Judgement, Monitor, MonitorFailure
from .monitors.pool import PooledMonitor
from .policy import Policy
from .publish import Outgoing, Publisher
from .schema import GuardDecision, GuardRequest, Step, ToolCall, Trajectory, utcnow
from .settings import GuardSettings
from .verdict import build_verdict, fit

log = logging.getLogger(__name__)

# a guard answers in milliseconds; an LLM judge behind it in seconds
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5,
                   1.0, 2.5, 5.0, 10.0, 30.0)
RESTART_AFTER = 2.0  # seconds between attempts to reach the broker


def read_request(body: bytes, max_bytes: int) -> tuple[GuardRequest, Trajectory] | Rejection:
    """The request and the run it asks about with the proposed call appended, or why the
    body is no request (the dead-letter vocabulary; an error's place in the body is named
    from its root, as ``trajectory.steps.0.role``)."""
    request = parse(GuardRequest.model_validate_json, body, max_bytes)
    if isinstance(request, Rejection):
        return request
    try:
        return request, request.judged()
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        return Rejection("invalid_schema", summarise(
            {**error, "loc": ("trajectory", *error["loc"])} for error in errors))


class GuardMetrics:
    """The guard's Prometheus metrics, on its own ``/metrics``. Labels are bounded
    vocabularies, never text from a request."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.decisions = Tally("monitor_gateway_guard_decisions",
                               "Guard decisions by decision (allow, block) and status (ok; "
                               "error: timeout, monitor error or backend down).",
                               ("decision", "status"))
        self.latency = Distribution("monitor_gateway_guard_latency_seconds",
                                    "From a check's arrival to its answer.", (),
                                    LATENCY_BUCKETS)
        self.invalid = Tally("monitor_gateway_guard_invalid_requests",
                             "Requests answered 4xx, by error.", ("error",))
        self.published = Tally("monitor_gateway_guard_decisions_published",
                               "Decisions the broker acknowledged on the decision topic.")
        self.dropped = Tally("monitor_gateway_guard_decisions_dropped",
                             "Decisions not published: GUARD_PENDING were already waiting.")
        for decision in ("allow", "block"):
            for status in ("ok", "error"):
                self.decisions.inc(decision, status, amount=0.0)
        self.published.inc(amount=0.0)
        self.dropped.inc(amount=0.0)
        registry.register(self)
        self.pending = Gauge("monitor_gateway_guard_decisions_pending",
                             "Decisions waiting to be published.", registry=registry)

    def collect(self) -> Iterator[Metric]:
        for tally in (self.decisions, self.latency, self.invalid, self.published,
                      self.dropped):
            yield tally.collect()


class DecisionLog:
    """Publishes decisions to ``GUARD_TOPIC`` in the background, at most ``GUARD_PENDING``
    waiting (sent to the producer or queued for it, not yet acknowledged)."""

    def __init__(self, settings: GuardSettings, metrics: GuardMetrics) -> None:
        self.settings = settings
        self.metrics = metrics
        self.waiting = 0
        self._queue: asyncio.Queue[Outgoing] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._publisher: Publisher | None = None
        self._drained = asyncio.Event()
        self._drained.set()
        self._dropping = Outage("publishing guard decisions (GUARD_PENDING reached: dropping)",
                                log)
        self._broker = BrokerOutage(settings.kafka_bootstrap, log, settings.broker_reminder)

    def start(self) -> None:
        self._broker.install()
        self._task = asyncio.create_task(self._run())
        self._task.add_done_callback(self._ended)

    @property
    def running(self) -> bool:
        """Whether the task that publishes the decisions is at work (``/live``)."""
        return self._task is not None and not self._task.done()

    @staticmethod
    def _ended(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("publishing guard decisions stopped; /live answers 503",
                      exc_info=exc)

    def offer(self, decision: GuardDecision, value: bytes) -> None:
        """Queue ``decision`` (``value``: its JSON) for publishing, unless ``GUARD_PENDING``
        are waiting already."""
        if self.waiting >= self.settings.guard_pending:
            self.metrics.dropped.inc()
            self._dropping.failed(f"{self.waiting} decisions waiting")
            return
        self._dropping.succeeded()
        self._set_waiting(self.waiting + 1)
        self._queue.put_nowait(self._message(decision, value))

    def _message(self, decision: GuardDecision, value: bytes | None = None) -> Outgoing:
        """The decision as a message; if the broker refuses it as too large, its verdict is
        cut to half its size as a verdict is, and once nothing is left to cut there, its
        call's arguments are left out (``cut`` names what was cut)."""

        def smaller() -> Outgoing | None:
            verdict = decision.verdict
            fitted = fit(verdict, len(verdict.model_dump_json().encode()) // 2)
            if fitted is not None:
                return self._message(decision.model_copy(update={"verdict": fitted}))
            if not decision.call.arguments:
                return None  # a verdict with nothing to cut and a bare call: small enough
            return self._message(decision.model_copy(update={
                "verdict": verdict.model_copy(update={
                    "cut": [*(verdict.cut or []), "call.arguments"]}),
                "call": decision.call.model_copy(update={"arguments": {}})}))

        return Outgoing(self.settings.guard_topic,
                        value if value is not None else decision.model_dump_json().encode(),
                        decision.verdict.trajectory_id.encode(), [], None, smaller)

    def _set_waiting(self, waiting: int) -> None:
        self.waiting = waiting
        if waiting:
            self._drained.clear()
        else:
            self._drained.set()
        self.metrics.pending.set(waiting)

    def _acknowledged(self, _: Outgoing) -> None:
        self._set_waiting(self.waiting - 1)
        self.metrics.published.inc()

    async def _run(self) -> None:
        """Reach the broker (again and again while it is down), then send what comes while
        checking that the broker answers."""
        starting = Outage(f"reaching Kafka at {self.settings.kafka_bootstrap} for the guard's "
                          "decisions", log)
        while True:
            publisher = Publisher(self.settings)
            try:
                await publisher.start()
                break
            except BaseException as exc:
                await publisher.stop()
                if not isinstance(exc, (KafkaError, OSError)):
                    raise
                starting.failed(exc)
                await asyncio.sleep(RESTART_AFTER)
        starting.succeeded()
        self._publisher = publisher
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self._broker.watch(publisher.ping))
            while True:
                await publisher.send(await self._queue.get(), self._acknowledged)

    async def stop(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for the decisions waiting to be published."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._drained.wait(), grace)
        if self.waiting:
            log.warning("stopping with %d guard decisions not published", self.waiting)
        if self._task is not None and not self._task.done():  # one that ended was logged
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._publisher is not None:
            await self._publisher.stop()
        self._broker.remove()


class Guard:
    """Judges proposed tool calls: :meth:`check` for a request read by :func:`read_request`."""

    def __init__(self, settings: GuardSettings, monitor: Monitor, policy: Policy,
                 metrics: GuardMetrics, decisions: DecisionLog) -> None:
        self.settings = settings
        self.monitor = monitor
        self.inline = monitor if isinstance(monitor, InlineMonitor) else None
        self.policy = policy
        self.metrics = metrics
        self.decisions = decisions
        self.budget = settings.guard_budget

    async def answer(self, request: GuardRequest, trajectory: Trajectory, started: float
                     ) -> bytes:
        """The decision's JSON, handed to the decision log once the answer is on its way
        (its publishing costs the answer nothing); ``started``: when the request arrived
        (``perf_counter``)."""
        decision = await self.check(request, trajectory, started)
        value = decision.model_dump_json().encode()
        asyncio.get_running_loop().call_soon(self.decisions.offer, decision, value)
        self.metrics.latency.observe(time.perf_counter() - started)
        return value

    async def check(self, request: GuardRequest, trajectory: Trajectory, started: float
                    ) -> GuardDecision:
        """The decision on ``trajectory``: the run with the proposed call appended."""
        received_at = utcnow()
        outcome, seconds = await self._judge(trajectory)
        evidence = ground(trajectory, outcome.quotes) if isinstance(outcome, Judgement) else []
        card = outcome.card if isinstance(outcome, Delegated) else self.monitor.card
        verdict = build_verdict(trajectory, outcome, evidence, card=card, policy=self.policy,
                                tag=None, received_at=received_at, monitor_seconds=seconds,
                                gateway_seconds=time.perf_counter() - started)
        decision = GuardDecision(decision="block" if verdict.flagged else "allow",
                                 step=len(trajectory.steps) - 1, call=request.call,
                                 verdict=verdict)
        self.metrics.decisions.inc(decision.decision, verdict.status)
        return decision

    async def _judge(self, trajectory: Trajectory) -> tuple[Judgement | MonitorFailure, float]:
        """The monitor's judgement within the budget, or the failure; and its seconds."""
        started = time.perf_counter()
        outcome: Judgement | MonitorFailure
        if self.inline is not None:
            outcome = judge_inline(self.inline, trajectory)
        else:
            try:
                async with asyncio.timeout(self.budget):
                    outcome = await _judged(self.monitor, trajectory)
            except UNAVAILABLE as exc:
                outcome = MonitorFailure(
                    self._late(time.perf_counter() - started) if isinstance(exc, TimeoutError)
                    else f"monitor backend unavailable: {_describe(exc)}", attempts=1)
            except Exception as exc:  # a monitor's failure is data, never a crash
                outcome = MonitorFailure(_describe(exc), attempts=1)
        seconds = time.perf_counter() - started
        if isinstance(outcome, Judgement) and seconds > self.budget:
            outcome = MonitorFailure(self._late(seconds), attempts=1)
        if isinstance(outcome, MonitorFailure):
            log.warning("guard check of a call failed: %s", outcome.reason)
        return outcome, seconds

    def _late(self, seconds: float) -> str:
        return (f"no judgement within the guard's budget of {self.budget * 1000:g} ms "
                f"(GUARD_BUDGET; {seconds * 1000:.1f} ms)")


def application(guard: Guard) -> web.Application:
    """``POST /check``, ``GET /metrics``, ``GET /health`` (204 while serving) and ``GET
    /live``: 204 while the decisions are being published, 503 once that task has stopped
    (the checks are still answered, but none reaches ``GUARD_TOPIC``: a liveness probe
    restarts the guard)."""
    metrics = guard.metrics
    max_bytes = guard.settings.max_message_bytes

    async def check(request: web.Request) -> web.Response:
        started = time.perf_counter()
        read: tuple[GuardRequest, Trajectory] | Rejection
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            size = request.content_length
            read = Rejection("too_large", f"{size if size is not None else 'the'} bytes is "
                             f"over the limit of {max_bytes}")
        else:
            read = read_request(body, max_bytes)
        if isinstance(read, Rejection):
            metrics.invalid.inc(read.error)
            return web.json_response({"error": read.error, "detail": read.detail},
                                     status=413 if read.error == "too_large" else 400)
        return web.Response(body=await guard.answer(*read, started),
                            content_type="application/json")

    async def scrape(_: web.Request) -> web.Response:
        return web.Response(body=generate_latest(metrics.registry),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def health(_: web.Request) -> web.Response:
        return web.Response(status=204)

    async def live(_: web.Request) -> web.Response:
        if guard.decisions.running:
            return web.Response(status=204)
        return web.Response(status=503, text="guard decisions are not being published\n")

    app = web.Application(client_max_size=max_bytes)
    app.add_routes([web.post("/check", check), web.get("/metrics", scrape),
                    web.get("/health", health), web.get("/live", live)])
    return app


WARM_UP = Trajectory(id="guard-warm-up", request="Warm up.", steps=[
    Step(role="assistant", tool_calls=[ToolCall(name="bash", arguments={"cmd": "true"})])])


async def warm(monitor: Monitor, settings: GuardSettings) -> None:
    """An inline monitor's first judgement, one a worker process, before the first check:
    spawned workers load the monitor's model first, and a check that waited for it would
    miss its budget. A remote backend is not called (nor billed). A monitor that fails here
    is logged: the checks get the fail policy."""
    if isinstance(monitor, PooledMonitor):
        workers = monitor.workers
    elif isinstance(monitor, InlineMonitor):
        workers = 1
    else:
        return
    try:
        async with asyncio.timeout(settings.monitor_timeout):
            await asyncio.gather(*[_judged(monitor, WARM_UP) for _ in range(workers)])
    except Exception as exc:  # the checks will say what is wrong, one by one
        log.warning("the monitor failed its warm-up: %s", _describe(exc))


async def serve(settings: GuardSettings, monitor: Monitor, policy: Policy, stop: asyncio.Event
                ) -> None:
    """``guard``: answer checks until ``stop`` is set, then publish the decisions waiting
    (within ``SHUTDOWN_GRACE``)."""
    metrics = GuardMetrics(CollectorRegistry())
    decisions = DecisionLog(settings, metrics)
    guard = Guard(settings, monitor, policy, metrics, decisions)
    await warm(monitor, settings)
    runner = web.AppRunner(application(guard), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, settings.guard_host, settings.guard_port).start()
        host, port = runner.addresses[0][:2]
        decisions.start()
        tune_gc()  # the monitor's model, frozen: no collection rescans it mid-check
        log.info("guard answering on http://%s:%d/check (decisions to %s)", host, port,
                 settings.guard_topic)
        await stop.wait()
    finally:
        await runner.cleanup()
        await decisions.stop(settings.shutdown_grace)
        if isinstance(monitor, Closeable):
            await monitor.aclose()
