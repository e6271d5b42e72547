"""The coalescing commit queue (sans-I/O): one request in flight, the newest offset of a partition
wins, no commit dropped, every commit answered exactly once — checked against an independent
model (the plain sequence of commits and a simulated broker)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.groups.commit_queue import CommitQueue, CommitResult

PARTITIONS = [("t", 0), ("t", 1), ("u", 0)]

commit_st = st.dictionaries(st.sampled_from(PARTITIONS), st.integers(0, 10_000), min_size=1, max_size=3)
# one step of the adapter: the application commits, or the request in flight gets its answer
step_st = st.one_of(
    st.tuples(st.just("commit"), commit_st),
    st.tuples(st.just("send"), st.none()),
    st.tuples(st.just("answer"), st.sampled_from(["ok", "ok", "retriable", "fatal"])),
    st.tuples(st.just("tick"), st.floats(0.0, 3.0)),
)


class Refused(Exception):
    pass


class TimedOut(Exception):
    retriable = True


def _merged(commits: list[dict[tuple[str, int], int]]) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for c in commits:
        out.update(c)
    return out


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(step_st, max_size=80))
def test_every_commit_answered_once_newest_wins_none_dropped(steps: list[tuple[str, object]]) -> None:
    queue = CommitQueue(retry_window_s=5.0)
    now = 0.0
    commits: list[dict[tuple[str, int], int]] = []  # ticket -> offsets, the model
    results: list[CommitResult] = []
    broker: dict[tuple[str, int], int] = {}  # what a broker applying the requests in order holds
    sent_offsets: list[dict[tuple[str, int], int]] = []

    def send() -> None:
        batch = queue.next_batch()
        if batch is not None:
            sent_offsets.append(dict(batch.offsets))
        assert queue.next_batch() is None  # never two in flight

    def answer(outcome: str) -> None:
        batch = queue.in_flight
        if batch is None:
            return
        error = None if outcome == "ok" else (TimedOut() if outcome == "retriable" else Refused())
        if error is None:
            broker.update(batch.offsets)
        result = queue.complete(batch, error, retriable=outcome == "retriable", now=now)
        if result is not None:
            results.append(result)

    for kind, arg in steps:
        if kind == "commit":
            assert isinstance(arg, dict)
            assert queue.add(arg, now) == len(commits)
            commits.append(arg)
        elif kind == "send":
            send()
        elif kind == "answer":
            answer(str(arg))
        else:
            now += float(arg)  # type: ignore[arg-type]
    while not queue.idle:  # the connection recovers: everything left is answered
        send()
        answer("ok")

    # every ticket answered exactly once, by a result holding exactly its range's commits merged
    answered = sorted(t for r in results for t in range(r.first_ticket, r.last_ticket + 1))
    assert answered == list(range(len(commits)))
    for r in results:
        assert dict(r.offsets) == _merged(commits[r.first_ticket : r.last_ticket + 1])
    # the newest offset wins: the broker ends with each partition's last commit, unless the
    # request carrying that last commit was refused (then the application was told so)
    last = _merged(commits)
    for p, offset in last.items():
        t_last = max(t for t, c in enumerate(commits) if p in c)
        (carrier,) = [r for r in results if r.covers(t_last)]
        assert carrier.offsets[p] == offset
        if carrier.error is None:
            assert broker[p] == offset
    # coalescing: never more requests than commits (one per commit at worst, plus retries)
    retries = sum(1 for kind, arg in steps if kind == "answer" and arg == "retriable")
    assert len(sent_offsets) <= len(commits) + retries


def test_commits_made_while_one_is_in_flight_go_out_as_one_request() -> None:
    queue = CommitQueue()
    queue.add({("t", 0): 1}, 0.0)
    first = queue.next_batch()
    assert first is not None and dict(first.offsets) == {("t", 0): 1}
    for offset in range(2, 5001):  # 4,999 commits while the first request is in flight
        queue.add({("t", offset % 2): offset}, 0.0)
    assert queue.next_batch() is None
    assert queue.complete(first, None, retriable=False, now=0.0) == CommitResult({("t", 0): 1}, 0, 0)
    second = queue.next_batch()
    assert second is not None
    assert dict(second.offsets) == {("t", 0): 5000, ("t", 1): 4999}
    assert (second.first_ticket, second.last_ticket) == (1, 4999)


def test_a_retriable_failure_is_retried_under_newer_offsets_until_the_window_ends() -> None:
    queue = CommitQueue(retry_window_s=5.0)
    queue.add({("t", 0): 10, ("t", 1): 10}, 0.0)
    batch = queue.next_batch()
    assert batch is not None
    queue.add({("t", 0): 20}, 1.0)
    assert queue.complete(batch, TimedOut(), retriable=True, now=1.0) is None  # put back
    retry = queue.next_batch()
    assert retry is not None and dict(retry.offsets) == {("t", 0): 20, ("t", 1): 10}
    assert (retry.first_ticket, retry.last_ticket) == (0, 1)
    result = queue.complete(retry, TimedOut(), retriable=True, now=5.5)  # window over: reported
    assert result is not None and isinstance(result.error, TimedOut) and result.commits == 2


def test_pending_commits_can_be_failed_without_sending_and_foreign_batches_are_refused() -> None:
    queue = CommitQueue()
    queue.add({("t", 0): 1}, 0.0)
    in_flight = queue.next_batch()
    queue.add({("t", 0): 2}, 0.0)
    failed = queue.fail_pending(Refused("lost"))
    assert failed is not None and (failed.first_ticket, failed.last_ticket) == (1, 1)
    assert queue.fail_pending(Refused("lost")) is None
    other = CommitQueue()
    other.add({("t", 0): 1}, 0.0)
    foreign = other.next_batch()
    assert foreign is not None
    with pytest.raises(ValueError, match="not in flight"):
        queue.complete(foreign, None, retriable=False, now=0.0)
    assert in_flight is not None
    queue.complete(in_flight, None, retriable=False, now=0.0)
    assert queue.idle


def test_a_batch_put_back_unsent_waits_again_with_newer_offsets_winning() -> None:
    queue: CommitQueue[tuple[str, int]] = CommitQueue()
    first = queue.add({("t", 0): 5, ("t", 1): 3}, now=1.0)
    batch = queue.next_batch()
    assert batch is not None
    second = queue.add({("t", 0): 8}, now=2.0)
    queue.put_back(batch)  # not sent: the commits wait again, the newer offset of t-0 wins
    again = queue.next_batch()
    assert again is not None
    assert (again.offsets, again.first_ticket, again.last_ticket, again.since) == (
        {("t", 0): 8, ("t", 1): 3},
        first,
        second,
        1.0,
    )
    with pytest.raises(ValueError, match="not in flight"):
        queue.put_back(batch)


@settings(max_examples=200, deadline=None)
@given(
    commits=st.lists(
        st.tuples(st.sampled_from(PARTITIONS), st.integers(0, 10_000), st.booleans()), max_size=40
    )
)
def test_adding_one_offset_is_adding_its_one_entry_mapping(
    commits: list[tuple[tuple[str, int], int, bool]],
) -> None:
    by_mapping, by_offset = CommitQueue[tuple[str, int]](), CommitQueue[tuple[str, int]]()
    for i, (partition, offset, send) in enumerate(commits):
        assert by_mapping.add({partition: offset}, float(i)) == by_offset.add_offset(
            partition, offset, float(i)
        )
        if send:
            assert by_mapping.next_batch() == by_offset.next_batch()
    assert by_mapping == by_offset
