"""Gateway settings: environment variables prefixed ``MONITOR_GATEWAY_``, overridden by flags."""

from __future__ import annotations

import ssl
from typing import Any, Literal, TypeVar

from faststream.security import BaseSecurity, SASLPlaintext, SASLScram256, SASLScram512
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "MONITOR_GATEWAY_"


class KafkaSettings(BaseSettings):
    """Where Kafka is and how to reach it; shared by every command that talks to Kafka."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    kafka_bootstrap: str = "127.0.0.1:9092"
    input_topic: str = "agent.trajectories"
    verdict_topic: str = "monitor.verdicts"
    dlq_topic: str = "monitor.dlq"
    # the review loop's topics (README: "Review"): verdicts picked for review, and labels
    review_topic: str = "monitor.review-requests"
    labels_topic: str = "monitor.labels"
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = "PLAIN"
    sasl_plain_username: str | None = None
    sasl_plain_password: SecretStr | None = None
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None

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
    # a registered monitor's name (monitor_gateway/monitors/registry.py), or a plugin as
    # 'package.module:factory'; each backend reads its own settings next to it
    monitor: str = "rules"
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    fail_policy: Literal["open", "closed"] = "open"
    concurrency: int = Field(default=64, ge=1, le=10_000)
    max_message_bytes: int = Field(default=1024 * 1024, ge=1)
    metrics_port: int = Field(default=9464, ge=0, le=65535)
    monitor_version: str = "1"
    monitor_config: str | None = None
    monitor_note: str | None = None
    # extensions (README: "Settings beyond the contract")
    metrics_host: str = "0.0.0.0"
    monitor_timeout: float = Field(default=30.0, gt=0)
    monitor_retries: int = Field(default=2, ge=0, le=20)
    retry_backoff: float = Field(default=0.2, ge=0)
    shutdown_grace: float = Field(default=10.0, ge=0)
    commit_interval: float = Field(default=0.5, gt=0)
    auto_offset_reset: Literal["earliest", "latest"] = "earliest"
    fetch_max_records: int = Field(default=500, ge=1)
    # how long a fetch waits for data; Kafka answers a waiting fetch as soon as data
    # arrives, a broker that does not (the embedded one) makes this the latency floor
    fetch_max_wait_ms: int = Field(default=500, ge=0)
    max_pending: int = Field(default=4096, ge=1)
    linger_ms: int = Field(default=5, ge=0)
    # the producer's size limit: a verdict over it is cut to fit (README: "Faults")
    max_publish_bytes: int = Field(default=1024 * 1024, ge=4096)
    # monitor backend outages (README: "Faults"): wait them out, or fail fast
    outage_policy: Literal["wait", "fail"] = "wait"
    outage_budget: float = Field(default=600.0, ge=0)
    breaker_failures: int = Field(default=5, ge=1)
    adaptive_concurrency: bool = True
    # worker processes for a CPU-bound monitor (README: "Worker processes"); unset: the
    # monitor's own choice (the offline monitor: up to 4, one a core; rules: none, inline)
    workers: int | None = Field(default=None, ge=0, le=256)
    otlp_endpoint: str | None = None  # OTLP/HTTP collector base URL; unset: no tracing


S = TypeVar("S", bound=BaseSettings)


class SettingsError(ValueError):
    """A setting that cannot work; its message is one line, fit for a terminal."""


def load_settings(cls: type[S], overrides: dict[str, Any]) -> S:
    """Environment first, then the flags that were given; one-line error on a bad value."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return cls(**given)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in error["loc"])
        # blame what the user wrote: the flag when one was given, else the variable
        where = flag(field) if field in given else f"{ENV_PREFIX}{field.upper()}"
        raise SettingsError(f"{where}: {error['msg']} (got {error.get('input')!r})") from None


def flag(name: str) -> str:
    """The command-line flag that overrides setting ``name``."""
    return "--bootstrap" if name == "kafka_bootstrap" else f"--{name.replace('_', '-')}"
