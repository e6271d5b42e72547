"""The logs read as they grow: each poll parses only the complete lines written since the last one, and
the running counts of the two waits (every partition owned; the drain) equal a count over the whole log."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.soak.drain import Consumption, Coverage
from kafka_placement.soak.events import Ack, Consumed, Event, Life, Ownership, dump_event
from kafka_placement.soak.logtail import LogTail


def line(event: Event) -> str:
    return dump_event(event) + "\n"


def test_each_poll_returns_only_the_complete_lines_written_since_the_last(tmp_path: Path) -> None:
    a0, a1, a2 = (Ack("p", s, None, None, 0, s, float(s)) for s in range(3))
    runner = tmp_path / "runner.jsonl"
    half = line(a2)[:17]
    runner.write_text(line(a0) + line(a1) + half)  # the third line is still being written
    tail = LogTail(tmp_path)
    assert tail.poll() == [a0, a1]
    assert tail.poll() == []  # nothing new: nothing parsed again
    with open(runner, "a") as f:
        f.write(line(a2)[17:])
    life = Life("g", "m", True, 5.0)
    (tmp_path / "member-m.jsonl").write_text(line(life))  # a member that started meanwhile
    assert tail.poll() == [life, a2]  # files in name order, each from where it was left
    assert (tail.logs.acks, tail.logs.lives) == ([a0, a1, a2], [life])


def test_judged_counts_each_holding_once_with_its_release(tmp_path: Path) -> None:
    held = Ownership("g", "a", 1, (0,), 1.0, None)
    released = Ownership("g", "a", 1, (0,), 1.0, 3.0)
    (tmp_path / "member-a.jsonl").write_text(line(held))
    tail = LogTail(tmp_path)
    assert tail.judged().ownerships == [held]
    with open(tmp_path / "member-a.jsonl", "a") as f:
        f.write(line(released))
    assert tail.judged().ownerships == [released]


def test_coverage_follows_acquisitions_and_releases() -> None:
    coverage = Coverage({"a": "g", "b": "g", "c": "h"})
    assert coverage.covered() == {"g": set(), "h": set()}
    coverage.add([Ownership("g", "a", 1, (0, 1), 1.0), Ownership("h", "c", 1, (0, 1, 2), 1.0)])
    coverage.add([Ownership("g", "a", 1, (0, 1), 1.0, 2.0), Ownership("g", "b", 1, (1, 2), 2.5)])
    assert coverage.covered() == {"g": {1, 2}, "h": {0, 1, 2}}


@settings(max_examples=100, deadline=None)
@given(
    acked=st.sets(st.integers(0, 40)),
    reads=st.lists(st.tuples(st.sampled_from(["g", "h"]), st.integers(0, 50))),
    order_seed=st.integers(0, 2**32),
    cut=st.integers(0, 200),
)
def test_the_running_drain_counts_equal_a_count_over_the_whole_log(
    acked: set[int], reads: list[tuple[str, int]], order_seed: int, cut: int
) -> None:
    """Acks and reads in any order (a member may log a record before its ack is logged), fed in two
    polls: the unconsumed counts are the set differences over everything."""
    events: list[Event] = [Ack("p", s, None, None, 0, s, 0.0) for s in acked]
    events += [Consumed(g, "m", 0, s, "p", s, 0.0) for g, s in reads]
    random.Random(order_seed).shuffle(events)
    consumption = Consumption(["g", "h"])
    consumption.add(events[:cut])
    consumption.add(events[cut:])
    for group in ("g", "h"):
        got = {s for g, s in reads if g == group}
        assert consumption.unconsumed()[group] == len(acked - got)
    assert consumption.progress() == sum(len(acked & {s for g, s in reads if g == group}) for group in "gh")
