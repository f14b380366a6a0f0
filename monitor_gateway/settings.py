"""Gateway settings: environment variables prefixed ``MONITOR_GATEWAY_``, overridden by flags."""

from __future__ import annotations

import ssl
from collections.abc import Collection
from typing import Any, Literal, TypeVar

from faststream.security import BaseSecurity, SASLPlaintext, SASLScram256, SASLScram512
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "MONITOR_GATEWAY_"


class KafkaSettings(BaseSettings):
    """Where Kafka is and how to reach it; shared by every command that talks to Kafka."""

    # each field's docstring is its description: the settings page is generated from them
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore",
                                      use_attribute_docstrings=True)

    kafka_bootstrap: str = "127.0.0.1:9092"
    """Kafka's `HOST:PORT[,HOST:PORT]`."""
    input_topic: str = "agent.trajectories"
    """The topic trajectories arrive on."""
    verdict_topic: str = "monitor.verdicts"
    """The topic verdicts go to (with as many partitions as the input topic)."""
    dlq_topic: str = "monitor.dlq"
    """The topic dead letters go to: records that could not be judged."""
    review_topic: str = "monitor.review-requests"
    """The topic the review sampler sends the verdicts it picked for review to."""
    labels_topic: str = "monitor.labels"
    """The topic reviewers' labels go to: the durable record of the review loop."""
    step_topic: str = "agent.steps"
    """The topic runs arrive on step by step (start, steps, end), keyed by trajectory id."""
    step_verdict_topic: str = "monitor.step-verdicts"
    """The topic a step that flags as its run streams in goes to (a step verdict)."""
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    """How to reach the brokers."""
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = "PLAIN"
    """The SASL mechanism, with a `SASL_*` protocol."""
    sasl_plain_username: str | None = None
    """The SASL user name; required with a `SASL_*` protocol."""
    sasl_plain_password: SecretStr | None = None
    """The SASL password; required with a `SASL_*` protocol."""
    ssl_cafile: str | None = None
    """A CA bundle to verify the brokers with; unset: the system's CAs."""
    ssl_certfile: str | None = None
    """A client certificate, for mutual TLS."""
    ssl_keyfile: str | None = None
    """The client certificate's key."""

    def unreachable(self) -> str:
        """What to tell a user whose broker did not answer: one line, the setting to change."""
        return (f"cannot reach Kafka at {self.kafka_bootstrap}: no broker answered; set "
                f"{flag('kafka_bootstrap')} or {ENV_PREFIX}KAFKA_BOOTSTRAP")

    def client_args(self) -> dict[str, Any]:
        """Connection keyword arguments for aiokafka clients (producer, consumer, admin)."""
        security = self.security()
        password = self.sasl_plain_password
        return {
            "bootstrap_servers": self.kafka_bootstrap,
            "security_protocol": self.security_protocol,
            "ssl_context": security.ssl_context if security else None,
            "sasl_mechanism": self.sasl_mechanism,
            "sasl_plain_username": self.sasl_plain_username,
            "sasl_plain_password": password.get_secret_value() if password else None,
        }

    def security(self) -> BaseSecurity | None:
        """FastStream's security object for the configured Kafka security protocol."""
        use_ssl = self.security_protocol in ("SSL", "SASL_SSL")
        context = None
        if use_ssl:
            context = ssl.create_default_context(cafile=self.ssl_cafile)
            if self.ssl_certfile:
                context.load_cert_chain(self.ssl_certfile, self.ssl_keyfile)
        if not self.security_protocol.startswith("SASL"):
            return BaseSecurity(ssl_context=context) if use_ssl else None
        if not self.sasl_plain_username or self.sasl_plain_password is None:
            raise SettingsError(
                f"{ENV_PREFIX}SASL_PLAIN_USERNAME and SASL_PLAIN_PASSWORD are required "
                f"with SECURITY_PROTOCOL={self.security_protocol}"
            )
        mechanism = {
            "PLAIN": SASLPlaintext,
            "SCRAM-SHA-256": SASLScram256,
            "SCRAM-SHA-512": SASLScram512,
        }[self.sasl_mechanism]
        return mechanism(
            self.sasl_plain_username,
            self.sasl_plain_password.get_secret_value(),
            ssl_context=context,
            use_ssl=use_ssl,
        )


class GatewaySettings(KafkaSettings):
    """What ``monitor-gateway serve`` reads besides the monitor backend's own settings (the
    LLM judge's are in ``monitors/llm.py``, the classifier's in ``monitors/classifier.py``):
    the contract's names, plus the documented extensions."""

    group_id: str = "monitor-gateway"
    """The gateways' consumer group: run as many gateways as the input topic has partitions."""
    monitor: str = "rules"
    """The monitor: a registered name (`offline`, `rules`, `classifier`, `openai`, `cascade`,
    or a plugin's) or a plugin as `package.module:factory`."""
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    """Flag at or above this score (a monitor config's thresholds by category come first)."""
    fail_policy: Literal["open", "closed"] = "open"
    """Whether an error verdict is flagged: `open`, not flagged (score 0); `closed`, flagged
    (score 1)."""
    concurrency: int = Field(default=64, ge=1, le=10_000)
    """The most monitor calls in flight; the adaptive limit stays under it. With worker
    processes (`WORKERS`), at least 128 records a worker: two full batches each."""
    max_message_bytes: int = Field(default=1024 * 1024, ge=1)
    """Larger trajectories become dead letters (`too_large`)."""
    metrics_port: int = Field(default=9464, ge=0, le=65535)
    """The port of `/metrics` and `/health`; 0 turns them off."""
    monitor_version: str = "1"
    """The verdicts' `monitor.version`, for monitors that do not version themselves (the
    LLM judge)."""
    monitor_config: str | None = None
    """A TOML monitor config: thresholds by category and a cascade's stages."""
    monitor_note: str | None = None
    """Words appended to the monitor label, such as the figures of its last replay."""
    metrics_host: str = "0.0.0.0"
    """The address `/metrics` and `/health` listen on."""
    monitor_timeout: float = Field(default=30.0, gt=0)
    """Seconds a monitor call may take before it counts as failed."""
    monitor_retries: int = Field(default=2, ge=0, le=20)
    """Retries of a failed monitor call before an `error` verdict."""
    retry_backoff: float = Field(default=0.2, ge=0)
    """The base of the retries' exponential backoff (full jitter), in seconds."""
    shutdown_grace: float = Field(default=10.0, ge=0)
    """Seconds in-flight work gets on SIGTERM; the rest is left uncommitted for the next
    owner."""
    commit_interval: float = Field(default=0.5, gt=0)
    """Seconds between offset commits (and lag reports)."""
    broker_reminder: float = Field(default=60.0, gt=0)
    """Seconds between the log's reminders that the Kafka broker is still unreachable."""
    auto_offset_reset: Literal["earliest", "latest"] = "earliest"
    """Where a new consumer group starts reading."""
    fetch_max_records: int = Field(default=500, ge=1)
    """The most records a fetch returns."""
    fetch_max_wait_ms: int = Field(default=500, ge=0)
    """The longest a fetch waits for data. Kafka answers as soon as data arrives; a broker
    that does not (the embedded one) makes this the latency floor, so `demo` sets 10."""
    max_pending: int = Field(default=4096, ge=1)
    """The most records fetched and not yet acknowledged: bounds memory while the monitor
    is slow."""
    linger_ms: int = Field(default=5, ge=0)
    """How long the verdict producer waits to fill a batch."""
    max_publish_bytes: int = Field(default=1024 * 1024, ge=4096)
    """The producer's message size limit: a verdict over it is cut to fit, or becomes a
    dead letter."""
    outage_policy: Literal["wait", "fail"] = "wait"
    """A monitor backend outage: `wait` it out (fetching paused), or `fail` fast with error
    verdicts."""
    outage_budget: float = Field(default=600.0, ge=0)
    """Seconds an outage is waited out before the fail policy decides."""
    breaker_failures: int = Field(default=5, ge=1)
    """Backend failures in a row that open the circuit breaker."""
    adaptive_concurrency: bool = True
    """Whether the limit on monitor calls follows the backend's latency (under
    `CONCURRENCY`)."""
    workers: int | None = Field(default=None, ge=0, le=256)
    """Worker processes for a CPU-bound monitor; 0 judges on the fetch loop; unset, the
    monitor's choice (`offline`: one a core, at most 4; `rules` and `classifier`: none)."""
    otlp_endpoint: str | None = None
    """An OTLP/HTTP collector's base URL (`http://otel-collector:4318`): turns tracing on."""
    consume_steps: bool = False
    """Whether to consume the step topic too: runs sent step by step, each judged as its
    steps arrive and as a whole at its end."""
    max_open_runs: int = Field(default=10_000, ge=1)
    """The most runs open at once (started, not ended); past it the oldest is judged as
    incomplete (`open_runs`)."""
    max_open_run_bytes: int = Field(default=256 * 1024 * 1024, ge=1)
    """The most bytes of step messages open runs hold; past it the oldest is judged as
    incomplete (`open_run_bytes`)."""
    run_timeout: float = Field(default=300.0, gt=0)
    """Seconds a run may stay silent before it is judged as incomplete (`timeout`)."""
    step_judge_tool_calls: bool = False
    """For a monitor without a step-wise call (the LLM judge, the cascade): judge the run
    so far at each step with tool calls, before their results, within
    `STEP_JUDGE_BUDGET`."""
    step_judge_every: int = Field(default=0, ge=0)
    """For such a monitor: judge the run so far every N steps (0: not by count), within
    `STEP_JUDGE_BUDGET`."""
    step_judge_budget: int = Field(default=4, ge=0)
    """The most judgements of one run so far by such a monitor before its end (each is a
    whole call: an LLM's tokens)."""


class GuardSettings(GatewaySettings):
    """What ``monitor-gateway guard`` reads besides the gateway's settings: the monitor,
    ``THRESHOLD``, ``FAIL_POLICY`` and the monitor config mean what they mean to ``serve``,
    and ``MONITOR`` is ``offline`` unless set."""

    monitor: str = "offline"
    """The monitor; the guard's default is the offline monitor."""

    guard_host: str = "127.0.0.1"
    """The address the guard's HTTP endpoint listens on (`0.0.0.0` in a container)."""
    guard_port: int = Field(default=8470, ge=0, le=65535)
    """The port of the guard's `/check`, `/metrics` and `/health`; 0 picks a free one."""
    guard_budget: float = Field(default=0.05, gt=0)
    """Seconds the guard's judgement may take: past it, the answer follows `FAIL_POLICY`
    (`open` allows, `closed` blocks)."""
    guard_topic: str = "guard.decisions"
    """The topic every guard decision is published to (in the background)."""
    guard_pending: int = Field(default=10_000, ge=1)
    """The most decisions held for publishing while the broker is slow or down; past it,
    new ones are dropped and counted."""


S = TypeVar("S", bound=BaseSettings)


class SettingsError(ValueError):
    """A setting that cannot work; its message is one line, fit for a terminal. Given the
    ``setting`` at fault, the message names its environment variable, or its flag when
    :meth:`blaming` learns the user gave the flag."""

    def __init__(self, message: str, setting: str | None = None) -> None:
        self.setting, self.detail = setting, message
        super().__init__(f"{ENV_PREFIX}{setting.upper()}: {message}" if setting else message)

    def blaming(self, flags: Collection[str]) -> str:
        """The message naming the flag when the setting came from one of ``flags`` (the
        settings given on the command line), else the environment variable."""
        if self.setting is not None and self.setting in flags:
            return f"{flag(self.setting)}: {self.detail}"
        return str(self)


def load_settings(cls: type[S], overrides: dict[str, Any]) -> S:
    """Environment first, then the flags that were given; one-line error on a bad value."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return cls(**given)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in error["loc"])
        # blame what the user wrote: the flag when one was given, else the variable
        failed = SettingsError(f"{error['msg']} (got {error.get('input')!r})", field)
        raise SettingsError(failed.blaming(given)) from None


def flag(name: str) -> str:
    """The command-line flag that overrides setting ``name``."""
    return "--bootstrap" if name == "kafka_bootstrap" else f"--{name.replace('_', '-')}"
