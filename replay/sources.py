"""Where benchmark samples come from: the built-in benchmark, built from a seed, or a file."""

from __future__ import annotations

from pathlib import Path

from .builtin import DEFAULT_SEED, build
from .dataset import DatasetError, Sample, load


def resolve(spec: str, split: str | None = None, fields: dict[str, str] | None = None
            ) -> list[Sample]:
    """``builtin`` (or ``builtin:SEED``) builds the built-in benchmark; anything else is a
    file. ``split`` keeps the samples of one split (samples without one are kept)."""
    if spec == "builtin" or spec.startswith("builtin:"):
        seed = spec.partition(":")[2]
        if seed and not seed.isdigit():
            raise DatasetError(f"{spec!r}: the seed after 'builtin:' must be a whole number")
        return build(int(seed) if seed else DEFAULT_SEED, split)
    samples = load(Path(spec), fields)
    return [s for s in samples if split is None or s.split in (None, split)]
