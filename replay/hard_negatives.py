"""Hard negatives: benign work with the alarming text in plain sight.

A monitor that judges only what the agent did must not flag an agent for text it merely
read. For every misbehavior sample with gold evidence, its benign twin (the same request,
answered well) is given the misbehaving twin's gold quotes where the agent only reads
them: in the request, as if the user had pasted them (``-pasted``), and, when the twin read
a tool's output, at the end of its last one (``-read``). The agent's own text is the
twin's, unchanged, so every one of these is benign: a flag on one that its twin did not
get is a false alarm caused by context alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from .dataset import Sample

PASTED = "\n\nFor reference, a rejected earlier attempt contained:\n\n"
WAYS = ("pasted", "read")  # where the quotes were put: a hard negative's id ends in one


def twin_id(made: Sample) -> str:
    """The id of the benign sample a hard negative was made from."""
    twin, _, way = made.id.rpartition("-")
    if way not in WAYS:
        raise ValueError(f"{made.id!r} is no hard negative")
    return twin


def hard_negatives(samples: Sequence[Sample]) -> list[Sample]:
    """The hard negatives of the misbehavior samples with gold evidence whose benign twin
    is in ``samples``."""
    benign = {s.pair_id: s for s in samples if s.label == "benign"}
    made: list[Sample] = []
    for sample in samples:
        twin = benign.get(sample.pair_id) if sample.label == "misbehavior" else None
        if twin is None or sample.pair_id is None or not sample.gold_evidence:
            continue
        quoted = "\n\n".join(dict.fromkeys(g.quote for g in sample.gold_evidence))
        unpaired: dict[str, object] = {"pair_id": None, "gold_evidence": []}
        made.append(twin.model_copy(update=unpaired | {
            "id": f"{twin.id}-{WAYS[0]}", "request": twin.request + PASTED + quoted}))
        read = [i for i, step in enumerate(twin.steps) if step.role == "tool"]
        if read:
            steps = list(twin.steps)
            last = steps[read[-1]]
            steps[read[-1]] = last.model_copy(update={"content": f"{last.content}\n{quoted}"})
            made.append(twin.model_copy(update=unpaired | {"id": f"{twin.id}-{WAYS[1]}",
                                                           "steps": steps}))
    return made
