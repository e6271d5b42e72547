"""Live: the confluent Consumer's member state under a coordinator move, a rebalance and a close while a
revocation waits for the member (issue 46).

Two members run in this process, polled in turn by the test (each has its own kafka-python IO thread);
what each owned and when is recorded by its callbacks on the application thread, the same thread that
commits, so "owned when committed" is an exact statement. Expected offsets come from the broker, read
by a plain ``confluent_kafka.Consumer``; the group's coordinator is moved by electing another leader
for the group's ``__consumer_offsets`` partition (Kafka's ``Utils.abs(groupId.hashCode()) %
offsets.topic.num.partitions``).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from kafka_placement.groups.membership import Phase
from member_process import create_filled_topic, wait_until
from test_group_offsets_live import _lead_with, _offsets_partition, _state

pytestmark = [pytest.mark.integration]

PARTITIONS = 6
RECORDS = 3000


@pytest.fixture(scope="module")
def filled(kafka_cluster: Any) -> str:
    return create_filled_topic(kafka_cluster.bootstrap_servers, "cf-state", PARTITIONS, RECORDS)


class Member:
    """One Consumer with its ownership timeline and its commits, kept on the application thread."""

    def __init__(self, bootstrap: str, group: str, topic: str, name: str, **conf: Any) -> None:
        from kafka_placement.clients.confluent import Consumer

        self.name = name
        self.owned: set[int] = set()
        self.revoked: list[list[int]] = []
        self.assignments: list[list[int]] = []
        self.refused = 0
        self.committed: list[tuple[float, dict[int, int], set[int]]] = []  # (when, offsets, owned then)
        self.positions: dict[int, int] = {}  # next offset per partition, from the records delivered
        self.first: dict[int, int] = {}  # first offset delivered per partition
        self.counts: dict[int, int] = {}  # records delivered per partition
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": name,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
                **conf,
            },
            assignor="range",
        )
        self.consumer.subscribe([topic], on_assign=self._assigned, on_revoke=self._revoked)

    def _assigned(self, consumer: Any, partitions: list[Any]) -> None:
        self.owned = {tp.partition for tp in partitions}  # eager: the whole assignment
        self.assignments.append(sorted(self.owned))

    def _revoked(self, consumer: Any, partitions: list[Any]) -> None:
        self.revoked.append(sorted(tp.partition for tp in partitions))
        self.owned -= {tp.partition for tp in partitions}

    def poll(self, commit: bool, timeout: float = 0.02) -> int:
        """Poll once; with ``commit``, commit the record's next offset synchronously (refusals counted,
        as an application would)."""
        import confluent_kafka

        from kafka_placement.errors import CommitFailedError

        msg = self.consumer.poll(timeout)
        if msg is None or msg.error() is not None:
            return 0
        p = msg.partition()
        self.first.setdefault(p, msg.offset())
        self.counts[p] = self.counts.get(p, 0) + 1
        self.positions[p] = msg.offset() + 1
        if commit:
            offsets = {p: msg.offset() + 1}
            owned_then = set(self.owned)
            try:
                self.consumer.commit(
                    offsets=[confluent_kafka.TopicPartition(msg.topic(), p, msg.offset() + 1)],
                    asynchronous=False,
                )
                self.committed.append((time.monotonic(), offsets, owned_then))
            except CommitFailedError:
                self.refused += 1
        return 1


def _committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    import confluent_kafka

    reader = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        tps = [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)]
        return {tp.partition: tp.offset for tp in reader.committed(tps, timeout=30)}
    finally:
        reader.close()


def _broker_address(admin: Any, node_id: int) -> tuple[str, int]:
    (broker,) = [b for b in admin.describe_cluster()["brokers"] if b["broker_id"] == node_id]
    return (broker["host"], int(broker["port"]))


def test_commits_survive_a_coordinator_move_and_a_rebalance_and_name_only_owned_partitions(
    kafka_cluster: Any, filled: str
) -> None:
    from kafka import KafkaAdminClient

    bootstrap = kafka_cluster.bootstrap_servers
    group = f"cf-state-move-{uuid.uuid4().hex[:8]}"
    a = Member(bootstrap, group, filled, "a", **{"enable.auto.commit": False})
    members = [a]
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="cf-state-move")
    moved: list[int] = []
    partition = -1
    try:
        wait_until(lambda: a.poll(commit=True) and len(a.committed) >= 50, 60, "a committing", step=0)
        # synchronous commits take the member's own connection to the coordinator (issue 46 item 2)
        connection = a.consumer._commit_connection
        first_address, sent_before_move = connection.address, connection.requests_sent
        assert first_address is not None and sent_before_move >= 50
        (meta,) = admin.describe_topics(["__consumer_offsets"])
        partition = _offsets_partition(group, len(meta["partitions"]))
        replicas, leader = _state(admin, partition)
        moved = list(replicas)
        _lead_with(admin, partition, [*(b for b in replicas if b != leader), leader])  # the move
        moved_at = time.monotonic()
        before = len(a.committed)
        # a keeps consuming and committing through the move (refused or retried commits allowed)
        wait_until(
            lambda: a.poll(commit=True) and len(a.committed) >= before + 50,
            60,
            "commits after the move",
            step=0,
        )
        # ... and follow the coordinator: the new one answers them on a connection of their own
        new_coordinator = _broker_address(admin, _state(admin, partition)[1])  # the partition's new leader
        assert connection.address == new_coordinator != first_address, (connection.address, first_address)
        assert connection.requests_sent >= sent_before_move + 40, (connection.requests_sent, sent_before_move)
        b = Member(bootstrap, group, filled, "b", **{"enable.auto.commit": False})
        members.append(b)

        def shared() -> bool:
            for m in members:
                m.poll(commit=True)
            return bool(a.owned and b.owned and not a.owned & b.owned)

        wait_until(shared, 60, "a and b sharing the partitions (the rebalance)", step=0)

        def drained() -> bool:  # both consume to the end
            for m in members:
                for _ in range(50):
                    m.poll(commit=True)
            return _committed(bootstrap, group, filled) == dict.fromkeys(
                range(PARTITIONS), RECORDS // PARTITIONS
            )

        wait_until(drained, 120, "every partition committed at its end")
        for m in members:
            bad = [(t, offsets, owned) for t, offsets, owned in m.committed if not set(offsets) <= owned]
            assert not bad, f"{m.name} committed partitions it did not own: {bad[:3]}"
        after_move = [c for c in a.committed if c[0] > moved_at]
        assert len(after_move) >= 50 and a.revoked, (len(after_move), a.revoked)
        print(
            f"\ncoordinator {leader} → {replicas[0] if replicas[0] != leader else replicas[1]}: "
            f"a committed {len(a.committed)} (refused {a.refused}), "
            f"b {len(b.committed)} (refused {b.refused}); a revoked {a.revoked}"
        )
    finally:
        for m in members:
            m.consumer.close()
        try:
            if moved:
                _lead_with(admin, partition, moved)
        finally:
            admin.close()


def test_a_close_while_a_revocation_waits_for_the_member_commits_and_hands_everything_over(
    kafka_cluster: Any, filled: str
) -> None:
    """a owns everything and consumes part of it; b joins; a's join begins and kafka-python's listener
    waits for a's application thread with the revocation — a closes then. Its close revokes (auto-commit:
    the positions committed first), leaves, and b takes every partition from exactly where a stopped."""
    bootstrap = kafka_cluster.bootstrap_servers
    group = f"cf-state-close-{uuid.uuid4().hex[:8]}"
    a = Member(
        bootstrap, group, filled, "a", **{"enable.auto.commit": True, "auto.commit.interval.ms": 60000}
    )
    b: Member | None = None
    try:
        wait_until(
            lambda: a.poll(commit=False) and len(a.owned) == PARTITIONS and sum(a.counts.values()) >= 600,
            60,
            "a consuming everything",
            step=0,
        )
        b = Member(bootstrap, group, filled, "b", **{"enable.auto.commit": False})
        joiner = b

        # a polls one drive at a time until its join begins (the coordinator asked for a rejoin after
        # b's JoinGroup); then it stops: kafka-python's listener hands the revocation over and waits
        def join_begun() -> bool:
            joiner.consumer.poll(0.02)
            a.poll(commit=False, timeout=0)  # poll(0): at most one drive of the group
            return a.consumer.phase is Phase.JOINING

        wait_until(join_begun, 30, "a's join begun", step=0)
        wait_until(
            lambda: a.consumer._handoff.pending, 10, "a's revocation waiting for its application thread"
        )
        positions = {p: a.positions.get(p, 0) for p in range(PARTITIONS)}
        started = time.monotonic()
        a.consumer.close()
        close_s = time.monotonic() - started
        assert a.revoked == [list(range(PARTITIONS))] and a.consumer.phase is Phase.CLOSED
        # the close committed a's positions; a partition a delivered nothing from has no position and no
        # commit (OFFSET_INVALID, -1001, as librdkafka reports it)
        assert _committed(bootstrap, group, filled) == {p: o if o else -1001 for p, o in positions.items()}
        remaining = {p: RECORDS // PARTITIONS - positions[p] for p in range(PARTITIONS)}
        expected = {p: n for p, n in remaining.items() if n}
        deadline = time.monotonic() + 60
        owned_at = None
        while joiner.counts != expected and time.monotonic() < deadline:
            joiner.poll(commit=False)  # b commits nothing: a second rebalance would show as duplicates
            if owned_at is None and len(joiner.owned) == PARTITIONS:
                owned_at = time.monotonic() - started
        # one rebalance, at once: a left cleanly (a released listener would have let a's join go on to
        # a JoinGroup, and the broker would have waited for that member's session to expire)
        assert joiner.assignments == [list(range(PARTITIONS))], joiner.assignments
        assert joiner.counts == expected, (joiner.counts, expected, joiner.first, positions)
        assert owned_at is not None and owned_at < 6.0, owned_at  # under one session.timeout.ms
        taken_s = time.monotonic() - started
        # b starts where a stopped: nothing consumed twice, nothing skipped
        assert joiner.first == {p: positions[p] for p, n in remaining.items() if n}
        assert close_s < 10, close_s
        print(
            f"\nclose while revoking: {close_s:.2f}s; b owned everything {owned_at:.2f}s and had "
            f"consumed the rest {taken_s:.2f}s after the close began"
        )
    finally:
        if a.consumer.phase is not Phase.CLOSED:
            a.consumer.close()
        if b is not None:
            b.consumer.close()
