"""The review layer's settings: the service's Kafka settings (same ``MONITOR_GATEWAY_``
variables), the sampler's rates and the review page's."""

from __future__ import annotations

from pydantic import Field, SecretStr

from monitor_gateway.settings import KafkaSettings

from .sampling import Design


class ReviewSettings(KafkaSettings):
    sampler_group: str = "monitor-gateway-review-sampler"
    # the probabilities a verdict is picked for review with (README: "Review")
    sample_flagged: float = Field(default=0.5, ge=0.0, le=1.0)
    sample_unflagged: float = Field(default=0.05, ge=0.0, le=1.0)
    sample_rates: dict[str, float] = Field(default_factory=dict)  # by stratum, as JSON
    sample_bands: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)
    sample_uncertainty_width: float = Field(default=0.05, ge=0.0, le=1.0)
    sample_uncertainty: float = Field(default=0.5, ge=0.0, le=1.0)
    sample_seed: str = "monitor-gateway"
    sampler_batch: int = Field(default=100, ge=1)  # verdicts committed together
    trajectory_wait: float = Field(default=2.0, ge=0.0)  # for a picked verdict's trajectory
    # the review page: who may write labels, where it listens
    review_token: SecretStr | None = None
    review_host: str = "127.0.0.1"
    review_port: int = Field(default=8088, ge=0, le=65535)

    def design(self) -> Design:
        return Design(flagged=self.sample_flagged, unflagged=self.sample_unflagged,
                      bands=self.sample_bands, uncertainty_width=self.sample_uncertainty_width,
                      uncertainty=self.sample_uncertainty, rates=self.sample_rates,
                      seed=self.sample_seed)
