"""Live proofs of the group assignors on the rack-labelled cluster.

Real kafka-python consumers run as subprocesses (``kafka_python_member.py``, driven through
``live_group.Worker``) so one can be closed gracefully or killed with SIGKILL. The group's state is read
back through the admin API (DescribeGroups: every member's subscription — the leader's exact input —
and assignment), and the assignment is checked against ``kafka_placement.assignment.assign`` run on
that same input.

Against the shared dev cluster:
``KAFKA_PLACEMENT_REUSE=1 pytest integration_tests/test_assignment_live.py``.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest

from live_group import (  # this directory is on sys.path
    SESSION_TIMEOUT_MS,
    AdminHandle,
    Worker,
    describe_group,
    predicted_from_description,
    stable_group,
)
from member_process import Json, create_ready_topic, wait_until

HEARTBEAT_MS = 1000


# ================================================================================== fixtures
@pytest.fixture(scope="module")
def admin(kafka_cluster: Any) -> Any:
    handle = AdminHandle(kafka_cluster.bootstrap_servers)
    yield handle
    handle.client.close()


def create_topic(admin: Any, partitions: int, replication_factor: int = 1) -> str:
    return create_ready_topic(admin, "asg", partitions, replication_factor)


_WORKER_LOG_DIR: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def _worker_log_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    _WORKER_LOG_DIR[:] = [str(tmp_path_factory.mktemp("asg-live-logs"))]


@pytest.fixture()
def workers() -> Any:
    started: list[Worker] = []
    yield started
    for w in started:
        w.close(timeout=10)
    fired = [
        (w.name, e.get("reason", e["ev"]))
        for w in started
        for e in w.snapshot()
        if e["ev"] in ("unstick", "recreate")
    ]
    if fired:
        print(f"[kafka-python member recoveries: {fired}]")


def _spawn(
    workers: list[Worker], cluster: Any, group: str, name: str, topics: list[str], strategy: str, **extra: Any
) -> Worker:
    w = Worker(cluster.bootstrap_servers, group, name, topics, strategy, _WORKER_LOG_DIR[0], **extra)
    workers.append(w)
    return w


# ================================================================================== tests
pytestmark = pytest.mark.integration


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky", "failover"])
def test_group_gets_exactly_what_assign_predicts(
    strategy: str, kafka_cluster: Any, admin: Any, workers: list[Worker]
) -> None:
    t1, t2 = create_topic(admin, 5), create_topic(admin, 4)
    group = f"g-{strategy}-{uuid.uuid4().hex[:8]}"
    subscriptions = {"c-a": [t1, t2], "c-b": [t1, t2], "c-c": [t1], "c-d": [t2]}
    priorities = {"c-a": 1, "c-b": 10, "c-c": 5, "c-d": None}
    for name, topics in subscriptions.items():
        extra = {"priority": priorities[name]} if strategy == "failover" else {}
        _spawn(workers, kafka_cluster, group, name, topics, strategy, **extra)
    desc = stable_group(admin, group, workers, timeout=45)
    assert desc["protocol"] == strategy
    ppt = {t1: 5, t2: 4}
    actual = {mid: sorted(m["assigned"]) for mid, m in desc["members"].items()}
    assert actual == predicted_from_description(strategy, ppt, desc)
    owned = [tp for parts in actual.values() for tp in parts]
    assert sorted(owned) == sorted({(t, p) for t, n in ppt.items() for p in range(n)})
    if strategy == "failover":
        by_client = {desc["members"][mid]["client_id"]: parts for mid, parts in actual.items()}
        # c-b (10) takes both topics; nothing is left for the others
        assert sorted(by_client["c-b"]) == sorted((t, p) for t, n in ppt.items() for p in range(n))


def test_worker_recovery_replaces_the_consumer_and_the_group_settles_again(
    kafka_cluster: Any, admin: Any, workers: list[Worker]
) -> None:
    """The last-resort recovery ``stable_group`` uses for a worker dropped from the group works:
    the worker's new consumer joins as a new member and the group is judged again."""
    topic = create_topic(admin, 4)
    group = f"g-recover-{uuid.uuid4().hex[:8]}"
    a = _spawn(workers, kafka_cluster, group, "a", [topic], "range")
    b = _spawn(workers, kafka_cluster, group, "b", [topic], "range")
    stable_group(admin, group, [a, b], timeout=45)
    old_member = a.last("assignment")["member_id"]  # type: ignore[index]
    a.recover()
    wait_until(lambda: a.last("recreate") is not None, 20, "worker a to replace its consumer")
    desc = stable_group(admin, group, [a, b], timeout=45)
    assert a.last("assignment")["member_id"] not in ("", old_member)  # type: ignore[index]
    actual = {mid: sorted(m["assigned"]) for mid, m in desc["members"].items()}
    assert actual == predicted_from_description("range", {topic: 4}, desc)


def test_failover_close_then_kill(kafka_cluster: Any, admin: Any, workers: list[Worker]) -> None:
    topic = create_topic(admin, 6)
    everything = {(topic, p) for p in range(6)}
    group = f"g-failover-{uuid.uuid4().hex[:8]}"
    w10 = _spawn(workers, kafka_cluster, group, "p10", [topic], "failover", priority=10)
    w5 = _spawn(workers, kafka_cluster, group, "p5", [topic], "failover", priority=5)
    w1 = _spawn(workers, kafka_cluster, group, "p1", [topic], "failover", priority=1)
    stable_group(admin, group, [w10, w5, w1], timeout=45)
    assert w10.assignment() == everything and not w5.assignment() and not w1.assignment()

    start = time.monotonic()
    w10.close()
    wait_until(lambda: w5.assignment() == everything, 3.0, "p5 to own everything within 3 s of closing p10")
    took_close = time.monotonic() - start
    workers.remove(w10)
    stable_group(admin, group, [w5, w1])

    start = time.monotonic()
    w5.kill()
    workers.remove(w5)
    wait_until(
        lambda: w1.assignment() == everything, SESSION_TIMEOUT_MS / 1000 + 3.0, "p1 to own all after kill -9"
    )
    took_kill = time.monotonic() - start
    print(f"failover after close: {took_close:.2f}s; after kill -9: {took_kill:.2f}s")


def test_cooperative_join_and_leave_two_rounds_never_two_owners(
    kafka_cluster: Any, admin: Any, workers: list[Worker]
) -> None:
    topic = create_topic(admin, 6)
    group = f"g-coop-{uuid.uuid4().hex[:8]}"
    a = _spawn(workers, kafka_cluster, group, "a", [topic], "cooperative-sticky")
    b = _spawn(workers, kafka_cluster, group, "b", [topic], "cooperative-sticky")
    stable_group(admin, group, [a, b], timeout=45)
    before = {w.name: w.assignment() for w in (a, b)}
    joined_at = time.time()
    c = _spawn(workers, kafka_cluster, group, "c", [topic], "cooperative-sticky")
    desc = stable_group(admin, group, [a, b, c], timeout=45)
    assert sorted(len(m["assigned"]) for m in desc["members"].values()) == [2, 2, 2]
    assert {mid: sorted(m["assigned"]) for mid, m in desc["members"].items()} == predicted_from_description(
        "cooperative-sticky", {topic: 6}, desc
    )
    # a and b only ever lost partitions (kept the rest: no eager revoke-all)
    for w in (a, b):
        assert w.assignment() <= before[w.name]
        for event in w.snapshot():
            if event["ev"] == "revoked" and event["t"] >= joined_at:
                assert set(map(tuple, event["parts"])) <= before[w.name] - w.assignment()
    # c's partitions arrive in a later generation than the one where a/b revoked them: each partition c
    # gets was revoked by its old owner before c added it. (Not every revocation before c's first add: when
    # a revoking member rejoins with a partition still listed as owned, the cooperative protocol takes a
    # third round for it, as Kafka's does, and c adds the first partition before the other is revoked.)
    gens_c = [e["gen"] for e in c.snapshot() if e["ev"] == "assignment" and e["parts"]]
    revoked_at = {
        tuple(tp): e["t"]
        for w in (a, b)
        for e in w.snapshot()
        if e["ev"] == "revoked" and e["t"] >= joined_at
        for tp in e["parts"]
    }
    added_at = {tuple(tp): e["t"] for e in c.snapshot() if e["ev"] == "added" for tp in e["parts"]}
    assert added_at and set(added_at) <= set(revoked_at), (added_at, revoked_at)
    assert all(revoked_at[tp] < t for tp, t in added_at.items()), (added_at, revoked_at)
    # after c joined: the generation where a/b revoked, then the one where c got the partitions
    gens_seen = {
        e["gen"] for w in (a, b, c) for e in w.snapshot() if e["ev"] == "assignment" and e["t"] >= joined_at
    }
    assert len(gens_seen) >= 2, f"expected a revocation round and a final round, saw {sorted(gens_seen)}"
    assert gens_c
    _assert_never_two_owners([a, b, c])

    # leave: c goes; its partitions come back without anyone else losing one
    kept = {w.name: w.assignment() for w in (a, b)}
    c.close()
    workers.remove(c)
    stable_group(admin, group, [a, b], timeout=30)
    for w in (a, b):
        assert kept[w.name] <= w.assignment()
    _assert_never_two_owners([a, b, c])


def _assert_never_two_owners(ws: list[Worker]) -> None:
    """Replay every worker's added/revoked callbacks in time order: no partition ever has two
    owners between an ``added`` and the matching ``revoked``/close."""
    timeline: list[tuple[float, str, str, tuple[str, int]]] = []
    for w in ws:
        for e in w.snapshot():
            if e["ev"] in ("added", "revoked"):
                for t, p in e["parts"]:
                    timeline.append((e["t"], e["ev"], w.name, (t, p)))
            elif e["ev"] in ("closed", "recreate"):
                # "recreate": a worker found dropped from the group (kafka-python, see
                # kafka_python_member) replaces its consumer; the broker had taken its partitions
                timeline.append((e["t"], "closed", w.name, ("", -1)))
    owner: dict[tuple[str, int], str] = {}
    for _, kind, name, tp in sorted(timeline, key=lambda x: (x[0], x[1] != "revoked")):
        if kind == "added":
            assert tp not in owner or owner[tp] == name, f"{tp} owned by {owner.get(tp)} and {name}"
            owner[tp] = name
        elif kind == "revoked":
            owner.pop(tp, None)
        else:
            for key in [k for k, v in owner.items() if v == name]:
                owner.pop(key)


@pytest.mark.parametrize("strategy", ["range", "sticky"])
def test_rack_aware_consumers_get_rack_local_partitions(
    strategy: str, kafka_cluster: Any, admin: Any, workers: list[Worker]
) -> None:
    from kafka_placement.assignment import TopicPartition
    from kafka_placement.assignment.assignment_quality import rack_local_fraction
    from kafka_placement.assignment.rack import partition_racks_from_replicas

    topic = create_topic(admin, 12, replication_factor=2)
    (described,) = admin.describe_topics([topic])
    broker_racks = dict(kafka_cluster.broker_racks)
    racks = partition_racks_from_replicas(
        {TopicPartition(topic, p["partition_index"]): p["replica_nodes"] for p in described["partitions"]},
        broker_racks,
    )
    group = f"g-rack-{strategy}-{uuid.uuid4().hex[:8]}"
    ws = [
        _spawn(workers, kafka_cluster, group, f"c-{rack}", [topic], strategy, rack=rack)
        for rack in ("rack1", "rack2", "rack3")
    ]
    desc = stable_group(admin, group, ws, timeout=45)
    assert {m["rack_id"] for m in desc["members"].values()} == {"rack1", "rack2", "rack3"}
    actual = {mid: sorted(m["assigned"]) for mid, m in desc["members"].items()}
    predicted = predicted_from_description(strategy, {topic: 12}, desc, racks)
    if strategy != "sticky":
        assert actual == predicted
    assert sorted(len(v) for v in actual.values()) == [4, 4, 4]
    from kafka_placement.assignment import Member

    members = {mid: Member([topic], rack=m["rack_id"]) for mid, m in desc["members"].items()}
    as_tps = {mid: [TopicPartition(t, p) for t, p in parts] for mid, parts in actual.items()}
    local = rack_local_fraction(as_tps, members, racks)
    # the same group without racks (what a rack-unaware assignor would have done)
    from kafka_placement.assignment import assign

    blind = assign(strategy, {topic: 12}, {mid: Member([topic]) for mid in members})
    blind_local = rack_local_fraction(blind, members, racks)
    best = _best_local_fraction(members, racks, 4)
    print(f"{strategy}: rack-local {local:.3f} (rack-unaware {blind_local:.3f}, best possible {best:.3f})")
    assert local is not None and blind_local is not None
    if strategy == "sticky":
        # sticky follows Java's rack-aware constrained builder exactly (greedy, per partition): the
        # live group's assignment is what Kafka's own StickyAssignor gives for these replicas
        java = _java_sticky(members, {topic: 12}, described["partitions"], broker_racks)
        as_java = {m: sorted((tp.topic, tp.partition) for tp in v) for m, v in java.items()}
        # Open finding (CI, 2 of 7 runs; and locally): the live leader's assignment is sometimes ours
        # for the described input but not Java's, sometimes Java's but not ours for that input — the
        # leader assigns from its own metadata of the brand-new topic. Either exact answer is accepted
        # until that is understood; anything else fails.
        assert actual in (predicted, as_java), (actual, predicted, as_java)
        return
    assert local >= blind_local
    assert local > blind_local or local == best, "rack-awareness gained nothing although it could"


def _java_sticky(
    members: dict[str, Any], partitions: dict[str, int], described: list[Any], broker_racks: dict[int, Any]
) -> dict[str, Any]:
    """Kafka's StickyAssignor (the 4.4.0 jars, through the conformance bridge) on the same input."""
    import os

    from kafka_placement.conformance.bridge import JavaError, reference
    from kafka_placement.conformance.jars import JavaReferenceUnavailable
    from kafka_placement.vocabulary import TopicPartition

    try:
        ref = reference()
    except JavaReferenceUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Java reference unavailable in CI: {exc}")
        pytest.skip(f"Java reference unavailable ({exc}); run scripts/fetch-java-reference.sh")
    topic = next(iter(partitions))
    replicas = {TopicPartition(topic, p["partition_index"]): tuple(p["replica_nodes"]) for p in described}
    result = ref.assign("sticky", partitions, members, replicas=replicas, broker_racks=broker_racks)
    assert not isinstance(result, JavaError), result
    return dict(result)


def _best_local_fraction(members: dict[str, Any], racks: dict[Any, frozenset[str]], quota: int) -> float:
    """The most rack-local partitions any balanced assignment can reach (bipartite matching of
    partitions to consumer slots with a replica in the consumer's rack)."""
    slots = [mid for mid in members for _ in range(quota)]
    match: dict[int, Any] = {}

    def augment(tp: Any, seen: set[int]) -> bool:
        for i, mid in enumerate(slots):
            if i in seen or members[mid].rack not in racks[tp]:
                continue
            seen.add(i)
            if i not in match or augment(match[i], seen):
                match[i] = tp
                return True
        return False

    matched = sum(1 for tp in racks if augment(tp, set()))
    return matched / len(racks)


def test_no_record_lost_across_three_rebalances(
    kafka_cluster: Any, admin: Any, workers: list[Worker]
) -> None:
    from kafka import KafkaProducer

    topic = create_topic(admin, 6, replication_factor=3)
    group = f"g-noloss-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap_servers, acks="all", linger_ms=5)
    produced: list[tuple[int, int]] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def produce() -> None:
        i = 0
        while not stop.is_set():
            try:
                md = producer.send(topic, key=str(i).encode(), value=b"v%d" % i).get(timeout=10)
                produced.append((md.partition, md.offset))
            except BaseException as exc:
                errors.append(exc)
                return
            i += 1
            time.sleep(0.002)

    thread = threading.Thread(target=produce, daemon=True)
    a = _spawn(workers, kafka_cluster, group, "a", [topic], "cooperative-sticky", report_records=True)
    b = _spawn(workers, kafka_cluster, group, "b", [topic], "cooperative-sticky", report_records=True)
    stable_group(admin, group, [a, b], timeout=45)
    thread.start()
    try:
        time.sleep(1.5)
        c = _spawn(workers, kafka_cluster, group, "c", [topic], "cooperative-sticky", report_records=True)
        stable_group(admin, group, [a, b, c], timeout=45)  # rebalance 1 (two rounds)
        time.sleep(1.0)
        b.close()
        workers.remove(b)
        stable_group(admin, group, [a, c], timeout=45)  # rebalance 2
        time.sleep(1.0)
        d = _spawn(workers, kafka_cluster, group, "d", [topic], "cooperative-sticky", report_records=True)
        stable_group(admin, group, [a, c, d], timeout=45)  # rebalance 3
        time.sleep(1.0)
    finally:
        stop.set()
        thread.join(30)
        producer.close()
    assert not errors, errors
    expected = set(produced)

    def consumed() -> list[tuple[int, int]]:
        return [tuple(x) for w in (a, b, c, d) for e in w.snapshot() if e["ev"] == "recs" for x in e["items"]]

    wait_until(lambda: expected <= set(consumed()), 30, "every produced record to be consumed")
    seen = consumed()
    duplicates = len(seen) - len(set(seen))
    print(f"produced {len(expected)} records, consumed {len(seen)}, duplicates {duplicates}, lost 0")
    assert expected <= set(seen)


def assignment_user_data(cluster: Any, group: str) -> dict[str, str]:
    """client id → what each member's assignment userData is (DescribeGroups, raw bytes)."""
    from kafka_placement.clients.kafka_python.group_description import RawGroupsAdmin, describe_classic_group

    raw_admin = RawGroupsAdmin(bootstrap_servers=cluster.bootstrap_servers, client_id="assignment-live")
    try:
        described = describe_classic_group(raw_admin, group)
    finally:
        raw_admin.close()
    return {m.client_id: m.assignment_user_data for m in described.members}


def test_aiokafka_failover_and_range(kafka_cluster: Any, admin: Any) -> None:
    """aiokafka consumers (one event loop, in process) with our aiokafka adapters: failover
    priorities decide the owner; range gives what ``assign`` predicts from DescribeGroups."""
    import asyncio

    from aiokafka import AIOKafkaConsumer

    from kafka_placement.clients.aiokafka import FailoverAssignor, RangeAssignor

    topic = create_topic(admin, 5)

    async def run(group: str, assignors: dict[str, Any]) -> tuple[dict[str, set[tuple[str, int]]], Json]:
        consumers = {
            name: AIOKafkaConsumer(
                topic,
                bootstrap_servers=kafka_cluster.bootstrap_servers,
                group_id=group,
                client_id=name,
                partition_assignment_strategy=(assignor,),
                session_timeout_ms=SESSION_TIMEOUT_MS,
                heartbeat_interval_ms=HEARTBEAT_MS,
            )
            for name, assignor in assignors.items()
        }
        try:
            for consumer in consumers.values():
                await consumer.start()
            deadline = time.monotonic() + 45
            while True:
                await asyncio.gather(*(c.getmany(timeout_ms=100) for c in consumers.values()))
                owned = {n: {(tp.topic, tp.partition) for tp in c.assignment()} for n, c in consumers.items()}
                desc = await asyncio.to_thread(describe_group, admin, group)
                by_client = {m["client_id"]: set(m["assigned"]) for m in desc["members"].values()}
                total = sum(len(v) for v in owned.values())
                if desc["state"] == "Stable" and by_client == owned and total == 5:
                    user_data = await asyncio.to_thread(assignment_user_data, kafka_cluster, group)
                    return owned, {**desc, "assignment_user_data": user_data}
                assert time.monotonic() < deadline, f"aiokafka group {group} did not settle: {desc}"
        finally:
            for consumer in consumers.values():
                await consumer.stop()

    group = f"g-aio-failover-{uuid.uuid4().hex[:8]}"
    owned, failover_desc = asyncio.run(
        run(
            group,
            {
                "a10": FailoverAssignor(priority=10),
                "a5": FailoverAssignor(priority=5),
                "a0": FailoverAssignor(),
            },
        )
    )
    assert owned == {"a10": {(topic, p) for p in range(5)}, "a5": set(), "a0": set()}
    # every member's assignment userData is the failover leader's, so Kafka would refuse to convert
    # the group to the consumer protocol (KAFKA-18134; shown live in test_mixed_protocol_live.py)
    assert failover_desc["assignment_user_data"] == {"a10": "failover", "a5": "failover", "a0": "failover"}

    group = f"g-aio-range-{uuid.uuid4().hex[:8]}"
    owned, desc = asyncio.run(run(group, {n: RangeAssignor() for n in ("r1", "r2", "r3")}))
    predicted = predicted_from_description("range", {topic: 5}, desc)
    client_of = {mid: m["client_id"] for mid, m in desc["members"].items()}
    assert owned == {client_of[mid]: set(parts) for mid, parts in predicted.items()}
    assert sorted(len(v) for v in owned.values()) == [1, 2, 2]
