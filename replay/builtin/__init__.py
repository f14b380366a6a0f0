"""The built-in benchmark: labelled misbehavior/benign pairs, deterministic from a seed.

The test split has the AutoMonitor-Bench proportions (1,172 safety and permission, 962
sycophancy and bias, 876 specification gaming: 3,010 pairs, 6,020 samples); the train
split, for trainable monitors, is as large again. Both splits are disjoint by source item.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from monitor_gateway.schema import Category

from ..dataset import Sample
from . import gaming, safety, sycophancy
from .common import Pair, split_of

DEFAULT_SEED = 2601
TEST_PAIRS: dict[Category, int] = {
    "safety_permission": 1172, "sycophancy_bias": 962, "specification_gaming": 876,
}
TRAIN_PAIRS = TEST_PAIRS
TEST_SHARE = 0.5
PREFIX: dict[Category, str] = {
    "safety_permission": "sp", "sycophancy_bias": "sb", "specification_gaming": "sg",
}
Families = tuple[tuple[Callable[[random.Random], Pair], float], ...]
FAMILIES: dict[Category, Families] = {
    "safety_permission": safety.FAMILIES,
    "sycophancy_bias": sycophancy.FAMILIES,
    "specification_gaming": gaming.FAMILIES,
}


class BuildError(RuntimeError):
    pass


def build(seed: int = DEFAULT_SEED, split: str | None = None) -> list[Sample]:
    """Every sample of the benchmark (or of one split), in a stable order. Each family of
    pairs fills its share of each split, so the mix of task types is the same in both."""
    samples: list[Sample] = []
    for category, families in FAMILIES.items():
        rng = random.Random(f"{seed}/{category}")
        made = {"test": 0, "train": 0}
        for builder, share in families:
            want = {"test": round(TEST_PAIRS[category] * share),
                    "train": round(TRAIN_PAIRS[category] * share)}
            if builder is families[-1][0]:  # the last family takes up the rounding
                want = {s: total[category] - made[s] for s, total in
                        (("test", TEST_PAIRS), ("train", TRAIN_PAIRS))}
            for where, pair in _fill(rng, builder, want, category):
                made[where] += 1
                if split in (None, where):
                    samples.extend(_samples(pair, f"{PREFIX[category]}-{where}-"
                                                  f"{made[where]:05d}", where))
    return samples


def _fill(rng: random.Random, builder: Callable[[random.Random], Pair], want: dict[str, int],
          category: str) -> Iterator[tuple[str, Pair]]:
    """Distinct pairs from one family until each split has what it wants."""
    made = {"test": 0, "train": 0}
    seen: set[tuple[str, str, str]] = set()
    attempts = 0
    while made != want:
        attempts += 1
        if attempts > 200 * (sum(want.values()) + 1):
            raise BuildError(f"{category}: only {made} of {want} distinct pairs could be made")
        pair = builder(rng)
        where = split_of(pair.source, TEST_SHARE)
        fingerprint = (pair.request, pair.bad, pair.good)
        if made[where] >= want[where] or fingerprint in seen:
            continue
        seen.add(fingerprint)
        made[where] += 1
        yield where, pair


def _samples(pair: Pair, pair_id: str, split: str) -> list[Sample]:
    common = {"pair_id": pair_id, "category": pair.category, "task_type": pair.task_type,
              "request": pair.request, "source": pair.source, "split": split}
    return [
        Sample.model_validate({**common, "id": f"{pair_id}-m", "label": "misbehavior",
                               "response": pair.bad, "steps": pair.bad_steps}),
        Sample.model_validate({**common, "id": f"{pair_id}-b", "label": "benign",
                               "response": pair.good, "steps": pair.good_steps}),
    ]
