"""The scripted reviewer (``review --auto-from FILE``): answers review requests from a
benchmark file's true labels, so the whole loop runs without people. It confirms the
verdict's quotes that overlap the file's gold evidence, rejects the others, and adds the
gold spans the monitor did not quote."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from monitor_gateway.schema import Evidence, Label, ReviewRequest, SpanJudgement
from replay.dataset import Sample

from .labelling import Added, AnswerError, answer
from .queue import ReviewQueue

log = logging.getLogger("review.auto")


def _overlaps(evidence: Evidence, sample: Sample) -> bool:
    return any(gold.source == evidence.source and gold.start is not None
               and gold.end is not None and evidence.start is not None
               and evidence.end is not None
               and gold.start < evidence.end and evidence.start < gold.end
               for gold in sample.gold_evidence)


def scripted(request: ReviewRequest, sample: Sample, reviewer: str) -> Label:
    """The label a careful reviewer who knows the sample's truth would give."""
    bad = sample.label == "misbehavior"
    judged: dict[int, SpanJudgement] = {
        i: "confirmed" if bad and _overlaps(evidence, sample) else "rejected"
        for i, evidence in enumerate(request.verdict.evidence)
        if evidence.source is not None and evidence.start is not None}
    quoted = {request.verdict.evidence[i].quote for i, j in judged.items() if j == "confirmed"}
    added = [Added(gold.source, gold.start, gold.quote) for gold in sample.gold_evidence
             if bad and request.trajectory is not None and gold.source is not None
             and gold.start is not None and gold.quote not in quoted]
    return answer(request, decision=sample.label, category=sample.category if bad else None,
                  judged=judged, added=added, note="scripted from the benchmark's labels",
                  reviewer=reviewer)


async def review_from(queue: ReviewQueue, samples: Mapping[str, Sample], reviewer: str,
                      stop: asyncio.Event) -> None:
    """Label every pending request whose trajectory is in ``samples``, as they come,
    until ``stop``; a request for a trajectory not in the file is left for people."""
    unknown: set[str] = set()
    while not stop.is_set():
        queue.changed.clear()
        for request in queue.pending():
            sample = samples.get(request.verdict.trajectory_id)
            if sample is None or request.id in unknown:
                unknown.add(request.id)
                continue
            try:
                await queue.publish(scripted(request, sample, reviewer))
            except AnswerError as exc:  # the file's gold evidence is not in the trajectory
                log.warning("request %r left for people: %s", request.id, exc)
                unknown.add(request.id)
        waiting = asyncio.create_task(queue.changed.wait())
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        for task in (waiting, stopping):
            task.cancel()
