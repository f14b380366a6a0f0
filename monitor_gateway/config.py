"""The monitor config file (``--monitor-config``, TOML): thresholds and cascade stages.

    [thresholds]              # written by `monitor-gateway calibrate`
    default = 0.5
    sycophancy_bias = 0.35

    [[stage]]                 # a cascade: cheap stages first
    monitor = "rules"
    low = 0.1                 # below: benign, decided here
    high = 0.9                # at or above: misbehavior, decided here
    [[stage]]
    monitor = "openai"        # the last stage decides whatever reaches it
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .schema import CATEGORIES
from .settings import SettingsError


class Stage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    monitor: str
    low: float = Field(default=0.0, ge=0.0, le=1.0)
    high: float = Field(default=1.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _ordered(self) -> Stage:
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}")
        return self


class Measured(BaseModel):
    """The monitor's figures on its last replay (``calibrate`` records them), so that every
    verdict's monitor label can say how good the monitor is known to be."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    mr: float | None
    far: float | None

    def describe(self) -> str:
        def rate(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.2f}"

        return f"last replay on {self.dataset}: MR {rate(self.mr)}, FAR {rate(self.far)}"


class Calibration(BaseModel):
    """Where ``calibrate``'s thresholds came from: which monitor, which budget, and how
    many benign and misbehavior samples each threshold rests on."""

    model_config = ConfigDict(extra="forbid")

    monitor: str
    version: str
    max_far: float
    benign: dict[str, int]
    misbehavior: dict[str, int]


class MonitorConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thresholds: dict[str, float] = Field(default_factory=dict)
    stage: list[Stage] = Field(default_factory=list)
    last_replay: Measured | None = None
    calibration: Calibration | None = None

    @model_validator(mode="after")
    def _known_categories(self) -> MonitorConfig:
        for name, value in self.thresholds.items():
            if name != "default" and name not in CATEGORIES:
                raise ValueError(f"thresholds.{name}: not a category (or 'default')")
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"thresholds.{name}: {value} is outside [0, 1]")
        return self

    def to_toml(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.thresholds:
            data["thresholds"] = self.thresholds
        if self.stage:
            data["stage"] = [s.model_dump() for s in self.stage]
        if self.last_replay:
            data["last_replay"] = self.last_replay.model_dump(exclude_none=True)
        if self.calibration:
            data["calibration"] = self.calibration.model_dump()
        return data


def load_config(path: str | None) -> MonitorConfig:
    if not path:
        return MonitorConfig()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        return MonitorConfig.model_validate(data)
    except FileNotFoundError:
        raise SettingsError(f"{path}: no such monitor config file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not TOML: {exc}") from None
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in error["loc"]) or "(root)"
        raise SettingsError(f"{path}: {where}: {error['msg']}") from None
