"""Which offsets may be committed when records of one partition finish out of order.

Records of a partition are processed concurrently, so record 7 may be done before record 5.
Kafka keeps one committed position per partition, so the gateway may only commit the
position below which *every* record is done: the low watermark of completed work.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from aiokafka import TopicPartition


class Ticket(NamedTuple):
    """Handed out when a record starts; ``epoch`` tells a ticket from before a rebalance."""

    partition: TopicPartition
    epoch: int
    offset: int


@dataclass
class _Partition:
    epoch: int
    pending: deque[int] = field(default_factory=deque)  # started, in arrival order
    done: set[int] = field(default_factory=set)
    position: int | None = None  # next offset to commit: everything below it is done
    committed: int | None = None


class OffsetTracker:
    def __init__(self) -> None:
        self._partitions: dict[TopicPartition, _Partition] = {}
        self._epoch = 0

    def start(self, partition: TopicPartition, offset: int) -> Ticket:
        state = self._partitions.get(partition)
        if state is None:
            self._epoch += 1
            state = self._partitions[partition] = _Partition(self._epoch)
        state.pending.append(offset)
        return Ticket(partition, state.epoch, offset)

    def done(self, ticket: Ticket) -> None:
        """Mark a record finished; a ticket from a partition since revoked is ignored."""
        state = self._partitions.get(ticket.partition)
        if state is None or state.epoch != ticket.epoch:
            return
        state.done.add(ticket.offset)
        while state.pending and state.pending[0] in state.done:
            offset = state.pending.popleft()
            state.done.discard(offset)
            state.position = offset + 1

    def committable(
        self, partitions: set[TopicPartition] | None = None
    ) -> dict[TopicPartition, int]:
        """Positions that moved since they were last committed."""
        return {
            tp: state.position
            for tp, state in self._partitions.items()
            if state.position is not None
            and state.position != state.committed
            and (partitions is None or tp in partitions)
        }

    def committed(self, positions: dict[TopicPartition, int]) -> None:
        for tp, position in positions.items():
            if (state := self._partitions.get(tp)) is not None:
                state.committed = position

    def forget(self, partitions: set[TopicPartition]) -> None:
        """Drop revoked partitions: their unfinished records belong to the next owner now."""
        for tp in partitions:
            self._partitions.pop(tp, None)

    def resume_point(self, partition: TopicPartition) -> int | None:
        """The offset a new owner would start from: the first record not yet done."""
        state = self._partitions.get(partition)
        if state is None:
            return None
        if state.pending:
            return state.pending[0]
        return state.position

    def in_flight(self) -> int:
        """Records started and not yet done (done ones waiting behind a slower one are not)."""
        return sum(len(state.pending) - len(state.done) for state in self._partitions.values())
