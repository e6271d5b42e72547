"""Live proofs of :class:`kafka_placement.clients.confluent.Consumer` (librdkafka fetching, the
group run by kafka-python's coordinator with our assignors).

Workers are ``confluent_member.py`` subprocesses (SIGKILL-able; ``confluent_workers.py``); records are
produced by a confluent-kafka Producer in this process throughout, and the consumed (partition, offset) set
is compared with the producer's delivery reports. The cooperative-sticky proofs are in
``test_confluent_cooperative_live.py``.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from typing import Any

import pytest

from confluent_workers import (  # this directory is on sys.path
    COMEBACK_BOUND_S,
    PARTITIONS,
    SESSION_TIMEOUT_S,
    KeyedProducer,
    owner_is,
    spawn,  # noqa: F401  (fixture)
    topic,  # noqa: F401  (fixture)
)
from member_process import wait_until

pytestmark = [pytest.mark.integration]


def test_failover_priorities_kill_close_rejoin_no_loss(
    kafka_cluster: Any,
    topic: str,  # noqa: F811  (fixture)
    spawn: Any,  # noqa: F811  (fixture)
    request: pytest.FixtureRequest,
) -> None:
    group = f"cf-failover-{uuid.uuid4().hex[:8]}"
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=5000, limit=100_000)
    p10 = spawn(group, "p10", topic, "failover", priority=10)
    request.addfinalizer(producer.stop)
    wait_until(lambda: p10.owned() == set(range(PARTITIONS)), 60, "p10 owning everything")
    p5 = spawn(group, "p5", topic, "failover", priority=5)
    p1 = spawn(group, "p1", topic, "failover", priority=1)
    wait_until(lambda: p5.last("assignment") and p1.last("assignment"), 60, "p5 and p1 in the group")
    owner_is(p10, [p5, p1], "p10 alone consuming with p5 and p1 in the group", 60)
    time.sleep(2)  # records flow to p10 only
    assert p10.records() and not p5.records() and not p1.records()

    # SIGKILL the owner: the broker drops it after session.timeout.ms, p5 takes over
    killed_at = time.time()
    p10.kill()
    took = owner_is(p5, [p1], "p5 owning everything after p10's SIGKILL", SESSION_TIMEOUT_S + 20) - killed_at
    assert took <= SESSION_TIMEOUT_S + 3, f"p5 took over {took:.1f}s after SIGKILL"
    time.sleep(2)

    # clean close: LeaveGroup at once, p1 takes over
    closed_at = time.time()
    p5.close()
    took_close = owner_is(p1, [], "p1 owning everything after p5 closed", 20) - closed_at
    assert took_close <= 3.0, f"p1 took over {took_close:.1f}s after p5's close"
    time.sleep(2)

    # the highest priority comes back and takes everything back
    p10b = spawn(group, "p10b", topic, "failover", priority=10)
    back = owner_is(p10b, [p1], "p10 (restarted) owning everything again", 60)
    assert max(p1.record_times(), default=0.0) < back, "p1 delivered records after p10 took over"
    time.sleep(2)

    producer.finish(240)  # 100k at 5k/s: 20 s on a quiet machine, far more at load average ~100
    assert producer.failed == 0 and len(producer.delivered) == 100_000
    produced = producer.delivered
    workers = [p10, p5, p1, p10b]

    def all_consumed() -> bool:
        return produced <= {r for w in workers for r in w.records()}

    wait_until(all_consumed, 60, f"{len(produced)} produced records consumed", step=0.5)
    consumed = [r for w in workers for r in w.records()]
    assert set(consumed) == produced, "records lost or invented"
    duplicates = len(consumed) - len(set(consumed))
    bound = sum(w.uncommitted_at_loss() for w in (p10, p5, p1))
    print(
        f"\nfailover: produced {len(produced)}, consumed {len(consumed)}, duplicates {duplicates} "
        f"(bound {bound}), SIGKILL takeover {took:.2f}s, close takeover {took_close:.2f}s"
    )
    assert duplicates <= bound
    refused = [e for w in workers for e in w.snapshot() if e["ev"] == "commit-refused"]
    assert not refused, refused
    _described_like_kafka_consumer_groups(
        kafka_cluster.bootstrap_servers, group, topic, {"p10b": set(range(PARTITIONS)), "p1": set()}
    )


def _described_like_kafka_consumer_groups(
    bootstrap: str,
    group: str,
    topic: str,  # noqa: F811  (the topic's name here, not the fixture)
    expected: dict[str, set[int]],
    protocol: str = "failover",
) -> None:
    """What ``kafka-consumer-groups.sh --describe`` shows, through the same admin RPCs
    (DescribeGroups, OffsetFetch, ListOffsets): a Stable group with protocol ``failover``, each
    member (client id) with its partitions, and lag 0 once the owner committed everything."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    described = admin.describe_consumer_groups([group])[group].result()
    assert described.state.name == "STABLE" and described.partition_assignor == protocol
    members = {m.client_id: {tp.partition for tp in m.assignment.topic_partitions} for m in described.members}
    assert members == expected
    partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    ends = admin.list_offsets({tp: OffsetSpec.latest() for tp in partitions})
    end = {tp.partition: future.result().offset for tp, future in ends.items()}

    def lag() -> dict[int, int]:
        request = [ConsumerGroupTopicPartitions(group, partitions)]
        committed = admin.list_consumer_group_offsets(request)[group].result().topic_partitions
        return {tp.partition: end[tp.partition] - tp.offset for tp in committed}

    wait_until(lambda: not any(lag().values()), 20, f"lag 0 for group {group}")


def test_a_member_that_lost_its_membership_stops_delivering_and_its_commits_are_refused(
    kafka_cluster: Any,
    topic: str,  # noqa: F811  (fixture)
    spawn: Any,  # noqa: F811  (fixture)
    request: pytest.FixtureRequest,
) -> None:
    """SIGSTOP the owner past the session timeout: the broker gives everything to the standby;
    after SIGCONT the old owner learns it lost the partitions (on_lost) before delivering one more
    record, its commit is refused, and it then rejoins and takes everything back (priority) within
    COMEBACK_BOUND_S of the SIGCONT."""
    group = f"cf-fenced-{uuid.uuid4().hex[:8]}"
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=2000, limit=30_000)
    request.addfinalizer(producer.stop)
    high = spawn(group, "high", topic, "failover", priority=10)
    wait_until(lambda: high.owned() == set(range(PARTITIONS)), 60, "high owning everything")
    low = spawn(group, "low", topic, "failover", priority=1)
    wait_until(lambda: low.last("assignment"), 60, "low in the group")
    owner_is(high, [low], "high alone consuming", 60)
    wait_until(lambda: high.records(), 20, "high consuming")

    os.kill(high.proc.pid, signal.SIGSTOP)
    stopped_at = time.time()
    try:
        took = owner_is(low, [], "low owning everything while high is stopped", SESSION_TIMEOUT_S + 20)
        assert took - stopped_at <= SESSION_TIMEOUT_S + 3
        time.sleep(1)
    finally:
        os.kill(high.proc.pid, signal.SIGCONT)
        resumed_at = time.time()
    try:
        lost = wait_until(
            lambda: next((e for e in high.snapshot() if e["ev"] == "lost" and e["t"] > stopped_at), None),
            20,
            "high's on_lost",
        )
    except AssertionError as exc:  # seen once in CI, with nothing on high's stderr: say what it was doing
        raise AssertionError(f"{exc}\n{high.diagnosis()}") from None
    assert set(lost["parts"]) == set(range(PARTITIONS))

    def refused_after_lost() -> bool:
        return any(e["ev"] == "commit-refused" and e["why"] == "after-lost" for e in high.snapshot())

    wait_until(refused_after_lost, 20, "high's commit after the loss refused")
    owner_is(high, [low], "high owning everything again", 60)
    back_at = high.first_time_owning(set(range(PARTITIONS)), after=lost["t"])
    assert back_at is not None
    # the loss is seen at the first drive after SIGCONT (no heartbeat for a session); then one
    # rebalance as a new member, which waits for low's next heartbeat (≤ 3 s) and its rejoin
    assert back_at - resumed_at <= COMEBACK_BOUND_S, f"back {back_at - resumed_at:.1f}s after SIGCONT"
    # nothing delivered or committed between the stop and the loss (the partitions were low's already;
    # records librdkafka hands back to the wait the stop interrupted are dropped), nor committed
    # between the loss and the next assignment
    events = high.snapshot()
    reassigned_at = next(e["t"] for e in events if e["ev"] == "assign" and e["t"] > lost["t"])
    stale = [e for e in events if e["ev"] == "recs" and stopped_at < e["t"] < lost["t"]]
    assert not stale, f"{sum(len(e['items']) for e in stale)} records delivered after the session expired"
    stale_commits = [e for e in events if e["ev"] == "committed" and stopped_at < e["t"] < reassigned_at]
    assert not stale_commits, stale_commits
    print(
        f"\nfenced: standby took over {took - stopped_at:.2f}s after SIGSTOP; back owning everything "
        f"{back_at - resumed_at:.2f}s after SIGCONT; refused after SIGCONT: "
        f"{[(e['why'], e['error']) for e in high.snapshot() if e['ev'] == 'commit-refused']}"
    )
    producer.finish(60)
    produced = producer.delivered
    wait_until(lambda: produced <= set(high.records()) | set(low.records()), 60, "every record consumed")


def test_auto_commit_static_member_and_rack_reach_the_group(
    kafka_cluster: Any,
    topic: str,  # noqa: F811  (fixture)
    spawn: Any,  # noqa: F811  (fixture)
    request: pytest.FixtureRequest,
) -> None:
    """enable.auto.commit=true (implemented by the wrapper): lag 0 without a manual commit;
    group.instance.id and client.rack are in the member's JoinGroup (DescribeGroups shows them)."""
    from kafka import KafkaAdminClient

    group = f"cf-auto-{uuid.uuid4().hex[:8]}"
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=2000, limit=3000)
    request.addfinalizer(producer.stop)
    conf = {
        "enable.auto.commit": True,
        "auto.commit.interval.ms": 200,
        "group.instance.id": "static-a",
        "client.rack": "rack1",
    }
    member = spawn(group, "auto", topic, "range", conf=conf)
    producer.finish(60)
    wait_until(lambda: producer.delivered <= set(member.records()), 60, "every record consumed")
    _described_like_kafka_consumer_groups(
        kafka_cluster.bootstrap_servers, group, topic, {"auto": set(range(PARTITIONS))}, protocol="range"
    )
    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="cf-live")
    try:
        (described,) = admin.describe_groups([group]).values()
    finally:
        admin.close()
    (m,) = described["members"]
    assert m["group_instance_id"] == "static-a"
    meta = m["member_metadata"]
    rack = meta.get("rack_id") if isinstance(meta, dict) else getattr(meta, "rack_id", None)
    assert rack == "rack1"
    assert not [e for e in member.snapshot() if e["ev"] in ("committed", "commit-refused")]
