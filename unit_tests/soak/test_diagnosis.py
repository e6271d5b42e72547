"""The diagnosis of unconsumed records, on hand-built logs whose answer is known by construction: a record
the brokers lost (acknowledged, not in the topic) vs one a group skipped (in the topic, its position past
it) vs one a group was behind on (its position short of the high watermark)."""

from __future__ import annotations

from kafka_placement.soak.diagnosis import unconsumed_report
from kafka_placement.soak.events import Ack, Consumed


def ack(seq: int, partition: int, offset: int) -> Ack:
    return Ack("p1", seq, None, None, partition, offset, float(seq))


def got(group: str, seq: int, partition: int, offset: int) -> Consumed:
    return Consumed(group, "m", partition, offset, "p1", seq, 100.0 + seq)


# partition 0 holds seq 0..3 at offsets 0..3; partition 1 holds seq 4..5 at offsets 0..1
ACKS = [ack(0, 0, 0), ack(1, 0, 1), ack(2, 0, 2), ack(3, 0, 3), ack(4, 1, 0), ack(5, 1, 1)]
IN_TOPIC = {a.record: (a.partition, a.offset) for a in ACKS}
HW = {0: 4, 1: 2}


def test_a_group_that_consumed_everything_is_left_out() -> None:
    consumed = [got("g", a.sequence, a.partition, a.offset) for a in ACKS]
    assert unconsumed_report(ACKS, consumed, ["g"], IN_TOPIC, {"g": {0: 4, 1: 2}}, HW) == {}


def test_behind_skipped_and_lost_are_told_apart() -> None:
    behind = [got("behind", s, p, o) for s, p, o in ((0, 0, 0), (1, 0, 1), (4, 1, 0), (5, 1, 1))]
    skipped = [got("skipped", s, p, o) for s, p, o in ((0, 0, 0), (2, 0, 2), (3, 0, 3), (4, 1, 0), (5, 1, 1))]
    everything = [got("all", a.sequence, a.partition, a.offset) for a in ACKS]
    in_topic = {r: at for r, at in IN_TOPIC.items() if r != ("p1", 5)}  # the brokers lost seq 5
    committed = {"behind": {0: 2, 1: 2}, "skipped": {0: 4, 1: 2}, "all": {0: 4, 1: 2}}
    report = unconsumed_report(
        ACKS, behind + skipped + everything, ["behind", "skipped", "all"], in_topic, committed, HW
    )
    assert set(report) == {"behind", "skipped"}
    assert report["behind"] == {
        "unconsumed": 2,
        "in_topic": 2,
        "not_in_topic": 0,
        "partitions": {
            "0": {
                "missing": 2,
                "first_offset": 2,
                "last_offset": 3,
                "offset_unknown": 0,
                "consumed_up_to": 1,
                "committed": 2,
                "high_watermark": 4,
            }
        },
        "examples": [["p1", 2, 0, 2], ["p1", 3, 0, 3]],
    }
    assert report["skipped"]["partitions"] == {
        "0": {
            "missing": 1,
            "first_offset": 1,
            "last_offset": 1,
            "offset_unknown": 0,
            "consumed_up_to": 3,
            "committed": 4,
            "high_watermark": 4,
        },
    }
    all_but_last = [got("g2", a.sequence, a.partition, a.offset) for a in ACKS[:5]]
    lost_by_brokers = unconsumed_report(ACKS, all_but_last, ["g2"], in_topic, {}, HW)
    assert lost_by_brokers["g2"]["in_topic"] == 0 and lost_by_brokers["g2"]["not_in_topic"] == 1
    assert lost_by_brokers["g2"]["partitions"]["1"]["committed"] is None


def test_examples_are_bounded() -> None:
    acks = [ack(s, 0, s) for s in range(50)]
    report = unconsumed_report(acks, [], ["g"], {}, {}, {0: 50}, examples=3)
    assert report["g"]["unconsumed"] == 50 and len(report["g"]["examples"]) == 3


def test_records_acknowledged_without_an_offset_are_counted_not_compared() -> None:
    # librdkafka reports some deliveries without an offset (session 16's soak: two such records, lost);
    # the report once crashed comparing None with None
    acks = [Ack("p1", 0, None, None, 0, None, 0.0), Ack("p1", 1, None, None, 0, None, 1.0), ack(2, 0, 7)]
    report = unconsumed_report(acks, [], ["g"], {}, {}, {0: 8})
    assert report["g"]["partitions"]["0"] == {
        "missing": 3,
        "first_offset": 7,
        "last_offset": 7,
        "offset_unknown": 2,
        "consumed_up_to": None,
        "committed": None,
        "high_watermark": 8,
    }
    assert report["g"]["examples"] == [["p1", 0, 0, None], ["p1", 1, 0, None], ["p1", 2, 0, 7]]
