"""Where benchmark samples come from: the realistic set shipped with the package, the
synthetic (templated) benchmark built from a seed, or a file."""

from __future__ import annotations

from pathlib import Path

from .builtin import DEFAULT_SEED, build
from .dataset import DatasetError, Sample, load
from .hard_negatives import hard_negatives

REALISTIC = Path(__file__).parent / "data" / "realistic.jsonl"
# the files of the named hand-written sets; ``realistic:fresh`` holds pairs written after the
# shipped model and scored by it once, held out from all training; ``realistic:everyday``
# unpaired benign everyday work, written apart from the monitor's code, never trained on;
# ``realistic:everyday-dev`` more of it, by other authors, that the offline monitor trains on;
# ``realistic:everyday-cal`` more again, trained on too and the data its operating point
# keeps everyday FAR on, on which no check is narrowed (its findings are never read);
# ``realistic:lookalike-dev`` benign work written to look like what the checks find, which it
# trains on too
NAMED = {"realistic": REALISTIC, "realistic:hard": REALISTIC,
         "realistic:fresh": REALISTIC.with_name("realistic-fresh.jsonl"),
         "realistic:everyday": REALISTIC.with_name("realistic-everyday.jsonl"),
         "realistic:everyday-dev": REALISTIC.with_name("realistic-everyday-dev.jsonl"),
         "realistic:everyday-cal": REALISTIC.with_name("realistic-everyday-cal.jsonl"),
         "realistic:lookalike-dev": REALISTIC.with_name("realistic-lookalike-dev.jsonl")}
SYNTHETIC = ("synthetic", "builtin")  # 'builtin' is the contract's name for it


def name_of(spec: str) -> str:
    """What a ``--dataset`` value is called in labels: ``synthetic`` for the templated
    benchmark under either name, the value itself otherwise."""
    name = spec.partition(":")[0]
    return "synthetic" if name in SYNTHETIC else spec


def resolve(spec: str, split: str | None = None, fields: dict[str, str] | None = None
            ) -> list[Sample]:
    """``realistic`` is the hand-written set, ``realistic:hard`` its hard negatives (see
    ``hard_negatives``), ``realistic:fresh`` the pairs written after the shipped model;
    ``synthetic`` (or ``builtin``, optionally ``:SEED``) builds the templated benchmark;
    anything else is a file. ``split`` keeps the samples of one split
    (samples without one are kept)."""
    name, _, seed = spec.partition(":")
    if name in SYNTHETIC:
        if seed and not seed.isdigit():
            raise DatasetError(f"{spec!r}: the seed after '{name}:' must be a whole number")
        return build(int(seed) if seed else DEFAULT_SEED, split)
    samples = load(NAMED.get(spec, Path(spec)), fields)
    samples = [s for s in samples if split is None or s.split in (None, split)]
    return hard_negatives(samples) if spec == "realistic:hard" else samples
