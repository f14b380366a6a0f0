from aiokafka import TopicPartition

from monitor_gateway.offsets import OffsetTracker

P0, P1 = TopicPartition("t", 0), TopicPartition("t", 1)


def test_commits_only_below_the_first_unfinished_record() -> None:
    tracker = OffsetTracker()
    tickets = [tracker.start(P0, offset) for offset in (10, 11, 12, 13)]
    tracker.done(tickets[1])
    tracker.done(tickets[3])
    assert tracker.committable() == {}
    tracker.done(tickets[0])
    assert tracker.committable() == {P0: 12}
    tracker.committed({P0: 12})
    assert tracker.committable() == {}
    tracker.done(tickets[2])
    assert tracker.committable() == {P0: 14}
    assert tracker.in_flight() == 0


def test_partitions_are_independent_and_gaps_in_offsets_are_fine() -> None:
    tracker = OffsetTracker()
    a = tracker.start(P0, 5)
    b = tracker.start(P1, 100)
    c = tracker.start(P1, 103)  # compaction or transaction markers leave gaps
    tracker.done(c)
    tracker.done(b)
    assert tracker.committable() == {P1: 104}
    assert tracker.committable({P0}) == {}
    tracker.done(a)
    assert tracker.committable({P0}) == {P0: 6}


def test_tickets_from_before_a_revocation_are_ignored() -> None:
    tracker = OffsetTracker()
    stale = tracker.start(P0, 7)
    tracker.forget({P0})
    fresh = tracker.start(P0, 7)  # the partition came back and the record is re-read
    tracker.done(stale)
    assert tracker.committable() == {}
    assert tracker.in_flight() == 1
    tracker.done(fresh)
    assert tracker.committable() == {P0: 8}
