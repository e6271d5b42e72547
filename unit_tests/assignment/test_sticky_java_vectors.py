"""Expected assignments written in Kafka's own tests, checked verbatim.

Source: apache/kafka ``clients/src/test/java/org/apache/kafka/clients/consumer/internals/
AbstractStickyAssignorTest.java`` (the rack-aware generation of the file, Kafka 3.5+; its
expectations hold for every ``RackConfig``; we run the rack-less one). Member and topic names are
Java's (``consumer1``, ``topic1``...), because Java's tie-breaks walk a ``HashMap`` of member ids.
"""

from __future__ import annotations

from kafka_placement.assignment.sticky import assign_sticky
from kafka_placement.assignment.sticky.checks import problems
from kafka_placement.java import java_hashmap_capacity
from kafka_placement.java import java_string_hash_unsigned as java_string_hash
from kafka_placement.vocabulary import Member, TopicPartition

T, T1, T2 = "topic", "topic1", "topic2"


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def parts(*tps: TopicPartition) -> list[TopicPartition]:
    return sorted(tps)


def run(ppt: dict[str, int], members: dict[str, Member]) -> dict[str, list[TopicPartition]]:
    result = assign_sticky(ppt, members)
    assert problems(ppt, members, result) == []
    return result


def test_java_string_hash_code() -> None:
    # java.lang.String#hashCode: "" -> 0, "a" -> 97, "Aa" and "BB" collide (2112), "hello" -> 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("hello") == 99162322
    assert java_hashmap_capacity(12) == 16 and java_hashmap_capacity(13) == 32


def test_one_consumer_one_topic() -> None:
    assert run({T: 3}, {"consumer": Member([T])}) == {"consumer": parts(tp(T, 0), tp(T, 1), tp(T, 2))}


def test_only_assigns_partitions_from_subscribed_topics() -> None:
    members = {
        "consumer": Member([T], owned=[tp(T, 0), tp(T, 1), tp("other", 0), tp("other", 1)], generation=1)
    }
    assert run({T: 2}, members)["consumer"] == parts(tp(T, 0), tp(T, 1))


def test_one_consumer_multiple_topics() -> None:
    assert run({T1: 1, T2: 2}, {"consumer": Member([T1, T2])})["consumer"] == parts(
        tp(T1, 0), tp(T2, 0), tp(T2, 1)
    )


def test_two_consumers_one_topic_two_partitions() -> None:
    result = run({T: 2}, {"consumer1": Member([T]), "consumer2": Member([T])})
    assert result == {"consumer1": [tp(T, 0)], "consumer2": [tp(T, 1)]}


def test_multiple_consumers_mixed_topic_subscriptions() -> None:
    members = {"consumer1": Member([T1]), "consumer2": Member([T1, T2]), "consumer3": Member([T1])}
    assert run({T1: 3, T2: 2}, members) == {
        "consumer1": parts(tp(T1, 0), tp(T1, 2)),
        "consumer2": parts(tp(T2, 0), tp(T2, 1)),
        "consumer3": parts(tp(T1, 1)),
    }


def test_two_consumers_two_topics_six_partitions() -> None:
    members = {"consumer1": Member([T1, T2]), "consumer2": Member([T1, T2])}
    assert run({T1: 3, T2: 3}, members) == {
        "consumer1": parts(tp(T1, 0), tp(T1, 2), tp(T2, 1)),
        "consumer2": parts(tp(T1, 1), tp(T2, 0), tp(T2, 2)),
    }


def test_consumer_owning_min_quota_expected_max_quota() -> None:
    members = {
        "consumer1": Member([T1, T2], owned=[tp(T1, 0), tp(T2, 1)], generation=1),
        "consumer2": Member([T1, T2], owned=[tp(T1, 1), tp(T2, 2)], generation=1),
    }
    assert run({T1: 2, T2: 3}, members) == {
        "consumer1": parts(tp(T1, 0), tp(T2, 1), tp(T2, 0)),
        "consumer2": parts(tp(T1, 1), tp(T2, 2)),
    }


def test_max_quota_consumers_more_than_expected_max_capacity_members() -> None:
    # the member that keeps maxQuota is decided by Java's HashMap order of the member ids
    members = {
        "consumer1": Member([T1, T2], owned=[tp(T1, 0), tp(T2, 0)], generation=1),
        "consumer2": Member([T1, T2], owned=[tp(T1, 1), tp(T2, 1)], generation=1),
        "consumer3": Member([T1, T2], generation=1),
    }
    assert run({T1: 2, T2: 2}, members) == {
        "consumer1": parts(tp(T1, 0)),
        "consumer2": parts(tp(T1, 1), tp(T2, 1)),
        "consumer3": parts(tp(T2, 0)),
    }


def test_same_bucket_member_ids_follow_the_group_member_order() -> None:
    # "Aa" and "BB" have the same String.hashCode: one HashMap bucket, walked in insertion order,
    # which Kafka takes from the group's member order. Java's StickyAssignor (4.4.0, through the
    # conformance bridge) gives exactly these for the three member orders.
    owned = {"Aa": [tp("t", 0), tp("t", 1)], "BB": [tp("t", 2), tp("t", 3)], "C": []}
    expected_by_first = {
        "Aa": {"Aa": parts(tp("t", 0), tp("t", 1)), "BB": parts(tp("t", 2)), "C": parts(tp("t", 3))},
        "BB": {"Aa": parts(tp("t", 0)), "BB": parts(tp("t", 2), tp("t", 3)), "C": parts(tp("t", 1))},
    }
    assert java_string_hash("Aa") == java_string_hash("BB")
    for order in (["Aa", "BB", "C"], ["BB", "Aa", "C"], ["C", "BB", "Aa"]):
        members = {m: Member(["t"], owned=owned[m], generation=3) for m in order}
        first = next(m for m in order if m != "C")
        assert run({"t": 4}, members) == expected_by_first[first]


def test_same_generation_claim_of_an_unsubscribed_member_still_voids_the_claims() -> None:
    # A and B claim t-0 in one generation; B no longer subscribes to t. Java resolves the claims
    # first (a tie: nobody owns t-0) and only then drops unsubscribed ones, so t-0 is free and A
    # keeps t-1 (Java's StickyAssignor 4.4.0 through the conformance bridge gives exactly this);
    # B winning outright one generation later gives the same.
    for b_generation in (3, 4):
        members = {
            "A": Member(["t", "u"], owned=[tp("t", 0), tp("t", 1)], generation=3),
            "B": Member(["u"], owned=[tp("t", 0)], generation=b_generation),
            "C": Member(["t"]),
        }
        assert run({"t": 2, "u": 1}, members) == {
            "A": parts(tp("t", 1)),
            "B": parts(tp("u", 0)),
            "C": parts(tp("t", 0)),
        }


def test_all_consumers_are_under_min_quota() -> None:
    members = {
        "consumer1": Member([T1, T2], owned=[tp(T1, 0)], generation=1),
        "consumer2": Member([T1, T2], owned=[tp(T1, 1)], generation=1),
        "consumer3": Member([T1, T2], generation=1),
    }
    assert run({T1: 2, T2: 3}, members) == {
        "consumer1": parts(tp(T1, 0), tp(T2, 1)),
        "consumer2": parts(tp(T1, 1), tp(T2, 2)),
        "consumer3": parts(tp(T2, 0)),
    }


def test_add_remove_consumer_one_topic() -> None:
    first = run({T: 3}, {"consumer1": Member([T])})
    assert first["consumer1"] == parts(tp(T, 0), tp(T, 1), tp(T, 2))
    second = run(
        {T: 3},
        {
            "consumer1": Member([T], owned=first["consumer1"], generation=1),
            "consumer2": Member([T], generation=1),
        },
    )
    assert second == {"consumer1": parts(tp(T, 0), tp(T, 1)), "consumer2": parts(tp(T, 2))}
    third = run({T: 3}, {"consumer2": Member([T], owned=second["consumer2"], generation=1)})
    assert third == {"consumer2": parts(tp(T, 0), tp(T, 1), tp(T, 2))}


def test_topic_balance_after_reassignment() -> None:
    both = [T1, T2]
    ppt = {T1: 12, T2: 12}

    def per_topic(result: dict[str, list[TopicPartition]], want: int) -> None:
        for tps in result.values():
            assert sum(x.topic == T1 for x in tps) == want and sum(x.topic == T2 for x in tps) == want

    a = run(ppt, {"consumer1": Member(both)})
    per_topic(a, 12)
    a = run(ppt, {"consumer1": Member(both, owned=a["consumer1"], generation=1), "consumer2": Member(both)})
    per_topic(a, 6)
    a = run(
        ppt,
        {
            "consumer1": Member(both, owned=a["consumer1"], generation=1),
            "consumer2": Member(both, owned=a["consumer2"], generation=1),
            "consumer3": Member(both, generation=1),
            "consumer4": Member(both, generation=1),
        },
    )
    per_topic(a, 3)
    a = run(
        ppt,
        {
            "consumer3": Member(both, owned=a["consumer3"], generation=1),
            "consumer4": Member(both, owned=a["consumer4"], generation=1),
        },
    )
    per_topic(a, 6)


def test_add_remove_two_consumers_two_topics() -> None:
    both = [T1, T2]
    ppt = {T1: 3, T2: 4}
    a = run(ppt, {"consumer1": Member(both), "consumer2": Member(both)})
    assert a == {
        "consumer1": parts(tp(T1, 0), tp(T1, 2), tp(T2, 1), tp(T2, 3)),
        "consumer2": parts(tp(T1, 1), tp(T2, 0), tp(T2, 2)),
    }
    b = run(
        ppt,
        {
            "consumer1": Member(both, owned=a["consumer1"], generation=1),
            "consumer2": Member(both, owned=a["consumer2"], generation=1),
            "consumer3": Member(both, generation=1),
            "consumer4": Member(both, generation=1),
        },
    )
    assert b == {
        "consumer1": parts(tp(T1, 0), tp(T2, 1)),
        "consumer2": parts(tp(T2, 0), tp(T1, 1)),
        "consumer3": parts(tp(T1, 2), tp(T2, 3)),
        "consumer4": parts(tp(T2, 2)),
    }
    c = run(
        ppt,
        {
            "consumer3": Member(both, owned=b["consumer3"], generation=1),
            "consumer4": Member(both, owned=b["consumer4"], generation=1),
        },
    )
    assert c == {
        "consumer3": parts(tp(T1, 2), tp(T2, 3), tp(T1, 0), tp(T2, 1)),
        "consumer4": parts(tp(T2, 2), tp(T1, 1), tp(T2, 0)),
    }


def test_poor_round_robin_assignment_scenario_is_valid_and_balanced() -> None:
    ppt = {f"topic{i}": (i % 2) + 1 for i in range(1, 6)}
    everything = list(ppt)
    odd = ["topic1", "topic3", "topic5"]
    members = {
        "consumer1": Member(everything),
        "consumer2": Member(odd),
        "consumer3": Member(odd),
        "consumer4": Member(everything),
    }
    result = run(ppt, members)
    assert sorted(len(v) for v in result.values()) == [2, 2, 2, 2]  # the javadoc's sticky result sizes


def test_all_owned_partition_claims_in_the_same_generation_are_invalidated() -> None:
    # AbstractStickyAssignorTest / StickyAssignorTest:
    # testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration...
    members = {
        "consumer1": Member([T], owned=[tp(T, 0), tp(T, 1)], generation=1),
        "consumer2": Member([T], owned=[tp(T, 0), tp(T, 2)], generation=1),
        "consumer3": Member([T], generation=1),
    }
    assert run({T: 3}, members) == {"consumer1": [tp(T, 1)], "consumer2": [tp(T, 2)], "consumer3": [tp(T, 0)]}


def test_cooperative_withholds_the_doubly_claimed_partition() -> None:
    # CooperativeStickyAssignorTest, same scenario: topic-0 "has to be considered owned and so it
    # can't be assigned until both have revoked"
    from kafka_placement.assignment.sticky.cooperative import assign_cooperative_sticky

    members = {
        "consumer1": Member([T], owned=[tp(T, 0), tp(T, 1)], generation=1),
        "consumer2": Member([T], owned=[tp(T, 0), tp(T, 2)], generation=1),
        "consumer3": Member([T], generation=1),
    }
    assert assign_cooperative_sticky({T: 3}, members) == {
        "consumer1": [tp(T, 1)],
        "consumer2": [tp(T, 2)],
        "consumer3": [],
    }


def test_owned_partitions_of_an_older_generation_lose_to_the_current_one() -> None:
    # AbstractStickyAssignorTest: consumer2 claims the same partitions with DEFAULT_GENERATION (-1)
    both = [T, T2]
    owned = [tp(T, 0), tp(T, 2), tp(T2, 1)]
    members = {
        "consumer1": Member(both, owned=owned, generation=10),
        "consumer2": Member(both, owned=owned, generation=-1),
    }
    result = run({T: 3, T2: 3}, members)
    assert set(result["consumer1"]) == set(owned)
    assert set(result["consumer2"]) == {tp(T, 1), tp(T2, 0), tp(T2, 2)}
