"""The synchronous-commit connection of our confluent Consumer, against a local stand-in coordinator that
speaks kafka-python's own protocol classes (:mod:`unit_tests.clients.fake_group_coordinator`)."""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fake_group_coordinator import FakeGroupCoordinator  # this directory is on sys.path
from kafka import KafkaConsumer
from kafka import errors as kafka_errors
from kafka.coordinator.base import BaseCoordinator, Generation
from kafka.coordinator.consumer import ConsumerCoordinator
from kafka.protocol.metadata import MetadataResponse
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_placement.clients.confluent import kafka_python_group
from kafka_placement.clients.confluent.commit_connection import (
    KEPT_REQUESTS,
    SELECTOR_TURN_INTERVAL_S,
    CommitConnection,
    CommitConnectionUnavailable,
    offset_commit_request,
)

# Kafka protocol error codes (https://kafka.apache.org/protocol#protocol_error_codes)
NOT_COORDINATOR = 16
ILLEGAL_GENERATION = 22
REBALANCE_IN_PROGRESS = 27


class Cluster:
    """kafka-python's ClusterMetadata as far as coordinators go: node id → broker address."""

    def __init__(self) -> None:
        self.ports: dict[str, int] = {}

    def broker_metadata(self, node_id: str) -> Any:
        port = self.ports.get(node_id)
        return (
            None
            if port is None
            else MetadataResponse.MetadataResponseBroker(node_id, "127.0.0.1", port, None)
        )


class Coordinator:
    """The group view (commit_connection.GroupView) over a stand-in of kafka-python's coordinator: its
    generation, its coordinator's address, and kafka-python's own answer handler, run unbound on this
    object so the membership updates it makes are recorded."""

    group_id = "orders"
    group_instance_id = None

    def __init__(self) -> None:
        self.cluster = Cluster()
        self.coordinator_id: str | None = "coordinator-1"
        self.stable: Generation | None = Generation(7, "member-a", "failover")
        self._generation = self.stable
        self._consumer_sensors = None
        self.dead: list[Any] = []
        self.resets: list[Any] = []
        self.rejoins = 0
        self.handled_on: list[str] = []

    def stable_generation(self) -> Generation | None:
        return self.stable

    def coordinator_address(self) -> tuple[str, int] | None:
        broker = None if self.coordinator_id is None else self.cluster.broker_metadata(self.coordinator_id)
        return None if broker is None else (broker.host, broker.port)

    def coordinator_dead(self, error: Any) -> None:
        self.dead.append(error)

    def reset_generation(self, member_id: str = "") -> None:
        self.resets.append(member_id)

    def request_rejoin(self) -> None:
        self.rejoins += 1

    def handle_offset_commit_response(self, offsets: Any, send_time: float, response: Any) -> None:
        self.handled_on.append("io-thread")
        kafka_offsets = kafka_python_group._kafka_offsets(offsets.items())  # as the adapter hands them on
        ConsumerCoordinator._handle_offset_commit_response(self, kafka_offsets, send_time, response)


@pytest.fixture
def broker() -> Iterator[FakeGroupCoordinator]:
    fake = FakeGroupCoordinator()
    yield fake
    fake.close()


def _connected_to(broker: FakeGroupCoordinator) -> tuple[Coordinator, CommitConnection]:
    """A commit connection whose group's coordinator is ``broker`` (not connected before its first commit)."""
    cluster, coordinator = Cluster(), Coordinator()
    cluster.ports["coordinator-1"] = broker.port
    return coordinator, _connection(coordinator, cluster)


def _committed_on_a_new_connection(conn: CommitConnection, offsets: dict[tuple[str, int], int]) -> bool:
    """Commit ``offsets`` once the connection takes it again: the first try may meet the old connection's
    end (then kafka-python's path would take it), the next ones the reconnect backoff. False after 20 s."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            conn.commit(offsets, timeout_s=10)
            return True
        except CommitConnectionUnavailable:
            time.sleep(0.05)
    return False


def _connection(coordinator: Coordinator, cluster: Cluster) -> CommitConnection:
    coordinator.cluster = cluster
    return CommitConnection(coordinator, dict(KafkaConsumer.DEFAULT_CONFIG))


def _sent(request: Any) -> dict[tuple[str, int], int]:
    return {(t.name, p.partition_index): p.committed_offset for t in request.topics for p in t.partitions}


def test_commit_carries_the_members_generation_and_the_offsets(broker: FakeGroupCoordinator) -> None:
    coordinator, conn = _connected_to(broker)
    try:
        conn.commit({("orders", 0): 42, ("orders", 3): 7, ("audit", 1): 0}, timeout_s=10)
        conn.commit({("orders", 0): 43}, timeout_s=10)
    finally:
        conn.close()
    first, second = broker.commits
    assert (first.group_id, first.generation_id_or_member_epoch, first.member_id) == ("orders", 7, "member-a")
    assert _sent(first) == {("orders", 0): 42, ("orders", 3): 7, ("audit", 1): 0}
    assert _sent(second) == {("orders", 0): 43}
    assert broker.connections == 1  # one connection for both
    assert coordinator.handled_on == []  # success is not handed to kafka-python


def _count_send_request(conn: CommitConnection) -> list[Any]:
    """Record the requests the commit connection hands to kafka.net's own request path."""
    connection = conn._link.connection if conn._link is not None else None
    assert connection is not None, "the first commit set the connection up"
    handed: list[Any] = []
    real = connection.send_request

    def send_request(request: Any, **kwargs: Any) -> Any:
        handed.append(request)
        return real(request, **kwargs)

    connection.send_request = send_request
    return handed


def test_a_set_up_connection_exchanges_on_the_calling_thread(broker: FakeGroupCoordinator) -> None:
    _, conn = _connected_to(broker)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)  # connects: kafka.net's loop does it
        handed = _count_send_request(conn)
        net = conn._selector()
        waits: list[Any] = []
        real_poll = net.poll

        def poll(timeout_ms: Any = None, future: Any = None) -> None:
            waits.append(timeout_ms)
            real_poll(timeout_ms, future=future)

        net.poll = poll  # type: ignore[method-assign]
        start = time.monotonic()
        for offset in range(2, 12):
            conn.commit({("orders", 0): offset}, timeout_s=10)
        turns_due = 1 + int((time.monotonic() - start) / SELECTOR_TURN_INTERVAL_S)
        polled = list(waits)
        assert conn._link is not None
        decoded = conn._link.codec.answers_decoded
    finally:
        conn.close()
    assert [_sent(c) for c in broker.commits[1:]] == [{("orders", 0): o} for o in range(2, 12)]
    assert handed == []  # none went through kafka.net's request path
    assert decoded == 1  # the same partition accepted: the same answer, decoded by kafka-python once
    assert set(polled) <= {0}  # the selector's turns (timers) never waited
    assert len(polled) <= turns_due < 10  # one per SELECTOR_TURN_INTERVAL_S, not one per commit
    assert broker.connections == 1


def test_requests_kept_for_reuse_carry_each_commits_offsets_generation_and_partitions(
    broker: FakeGroupCoordinator,
) -> None:
    coordinator, conn = _connected_to(broker)
    commits: list[dict[tuple[str, int], int]] = [
        {("orders", 0): 1},
        {("orders", 0): 2, ("audit", 1): 7},
        {("audit", 1): 8, ("orders", 0): 3},  # the same partitions in another order
        {("orders", 0): 4, ("audit", 1): 9},
        {("orders", 0): 5},
    ]
    try:
        for offsets in commits:
            conn.commit(offsets, timeout_s=10)
        coordinator.stable = Generation(8, "member-b", "failover")  # a rebalance later
        conn.commit({("orders", 0): 6}, timeout_s=10)
        for partition in range(2 * KEPT_REQUESTS):  # many partition sets: the kept ones stay bounded
            conn.commit({("many", partition): partition}, timeout_s=10)
        assert conn._link is not None and len(conn._link.requests) <= KEPT_REQUESTS
        conn.commit({("orders", 0): 7}, timeout_s=10)
    finally:
        conn.close()
    sent = [(r.generation_id_or_member_epoch, r.member_id, _sent(r)) for r in broker.commits]
    assert sent[: len(commits) + 1] == [(7, "member-a", c) for c in commits] + [
        (8, "member-b", {("orders", 0): 6})
    ]
    assert sent[-1] == (8, "member-b", {("orders", 0): 7})
    assert [s[2] for s in sent[len(commits) + 1 : -1]] == [{("many", p): p} for p in range(2 * KEPT_REQUESTS)]
    assert conn.exchanges == len(sent) - 1


def test_an_unanswered_exchange_closes_the_connection_in_time(broker: FakeGroupCoordinator) -> None:
    _, conn = _connected_to(broker)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)
        broker.silent = True
        start = time.monotonic()
        with pytest.raises(CommitConnectionUnavailable, match="not answered"):
            conn.commit({("orders", 0): 2}, timeout_s=0.5)
        elapsed = time.monotonic() - start
        broker.silent = False
        done = _committed_on_a_new_connection(conn, {("orders", 0): 3})
    finally:
        conn.close()
    assert 0.4 < elapsed < 10  # 0.5 s asked; generous for a loaded machine
    assert done and broker.connections == 2
    assert [_sent(c) for c in broker.commits] == [{("orders", 0): o} for o in (1, 2, 3)]


def test_an_answer_to_another_request_closes_the_connection(broker: FakeGroupCoordinator) -> None:
    coordinator, conn = _connected_to(broker)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)
        broker.correlation_shift = 1
        with pytest.raises(CommitConnectionUnavailable, match="Correlation IDs do not match"):
            conn.commit({("orders", 0): 2}, timeout_s=10)
        broker.correlation_shift = 0
        done = _committed_on_a_new_connection(conn, {("orders", 0): 3})
    finally:
        conn.close()
    assert done and broker.connections == 2
    assert coordinator.handled_on == []  # not an answer of ours: nothing handed to kafka-python


def test_a_throttled_answer_is_handed_to_kafka_nets_throttling(
    broker: FakeGroupCoordinator, caplog: pytest.LogCaptureFixture
) -> None:
    # KIP-219: a client holds back its next request on that connection for the throttle time. kafka.net
    # pauses the connection (for brokers from 2.0 on; this stand-in answers ApiVersions as a 0.10
    # broker, so here kafka.net only logs it), and a paused connection is not exchanged on
    _, conn = _connected_to(broker)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)
        broker.throttle_ms = 60_000
        with caplog.at_level("WARNING", logger="kafka.net.connection"):
            conn.commit({("orders", 0): 2}, timeout_s=10)  # accepted, and throttled
        assert conn._link is not None
        conn._link.connection.pause("throttle")  # as kafka.net does for a 2.0+ broker
        handed = _count_send_request(conn)
        with pytest.raises(CommitConnectionUnavailable, match="paused"):
            conn.commit({("orders", 0): 3}, timeout_s=10)
    finally:
        conn.close()
    assert "OffsetCommitResponse throttled by broker (60000 ms)" in caplog.text
    assert len(handed) == 1  # kafka.net's request path, which refuses a paused connection at once
    assert [_sent(c) for c in broker.commits] == [{("orders", 0): 1}, {("orders", 0): 2}]


def test_a_connection_re_authenticating_is_left_to_kafka_nets_loop(broker: FakeGroupCoordinator) -> None:
    # KIP-368: while the connection re-authenticates, its SASL frames must be the next on the wire,
    # so no exchange of our own; kafka.net holds the request until re-authentication is over
    _, conn = _connected_to(broker)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)
        handed = _count_send_request(conn)
        assert conn._link is not None
        conn._link.connection._reauth._reauthenticating = True  # as its re-auth task sets it
        with pytest.raises(CommitConnectionUnavailable, match="not answered"):
            conn.commit({("orders", 0): 2}, timeout_s=0.3)
    finally:
        conn.close()
    assert len(handed) == 1 and [_sent(c) for c in broker.commits] == [{("orders", 0): 1}]


def test_an_answer_in_two_pieces_is_finished_by_the_loop(broker: FakeGroupCoordinator) -> None:
    coordinator, conn = _connected_to(broker)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)
        broker.split_answer_s = 0.05
        conn.commit({("orders", 0): 2}, timeout_s=10)
        conn.commit({("orders", 0): 3}, timeout_s=10)
    finally:
        conn.close()
    assert [_sent(c) for c in broker.commits] == [{("orders", 0): o} for o in (1, 2, 3)]
    assert broker.connections == 1 and coordinator.handled_on == []


def test_the_version_is_negotiated_with_the_brokers_api_versions() -> None:
    # KIP-35: the client sends the highest version both sides support; kafka-python's coordinator
    # offers OffsetCommit up to v8, this broker up to v5
    fake = FakeGroupCoordinator(offset_commit_max_version=5)
    cluster, coordinator = Cluster(), Coordinator()
    cluster.ports["coordinator-1"] = fake.port
    conn = _connection(coordinator, cluster)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)
    finally:
        conn.close()
        fake.close()
    assert fake.commit_versions == [5]


def test_a_reopened_connection_negotiates_its_version_again(broker: FakeGroupCoordinator) -> None:
    # the version is looked up once per connection, not once per connection object's address: a
    # broker restarted with fewer versions (a rolling downgrade) gets what it offers now
    _, conn = _connected_to(broker)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)
        conn.commit({("orders", 0): 2}, timeout_s=10)
        broker.max_version = 5
        broker.drop_connections()
        done = _committed_on_a_new_connection(conn, {("orders", 0): 3})
    finally:
        conn.close()
    assert done and broker.connections == 2
    answered = broker.commit_versions[:2] + broker.commit_versions[-1:]
    assert answered == [8, 8, 5]


def test_the_request_is_the_one_kafka_pythons_coordinator_builds() -> None:
    offsets = {
        KafkaTopicPartition("orders", 0): OffsetAndMetadata(42, "", -1),
        KafkaTopicPartition("audit", 2): OffsetAndMetadata(9, "", -1),
    }
    captured: list[Any] = []

    class Manager:
        async def send(self, request: Any, node_id: Any = None) -> Any:
            captured.append(request)
            return type("Response", (), {"topics": []})()

    class Subscription:
        def partitions_auto_assigned(self) -> bool:
            return True

    class Own(Coordinator):
        _use_offset_apis = True
        _use_group_apis = True
        _manager = Manager()
        _subscription = Subscription()

        def coordinator(self) -> str:
            return "coordinator-1"

        def generation_if_stable(self) -> Generation | None:
            return self.stable

        def _handle_offset_commit_response(self, offsets: Any, send_time: float, response: Any) -> None:
            pass  # the answer (no topics) is not what this test looks at

    own = Own()
    step = ConsumerCoordinator._send_offset_commit_request(own, offsets)
    with pytest.raises(StopIteration):
        step.send(None)
    ours = {(tp.topic, tp.partition): offset.offset for tp, offset in offsets.items()}
    assert offset_commit_request("orders", 7, "member-a", None, ours) == captured[0]


@pytest.mark.parametrize(
    ("code", "raised", "membership"),
    [
        # kafka-python's handling, as Java's ConsumerCoordinator.OffsetCommitResponseHandler: a moved
        # coordinator is marked dead and the commit retriable; an old generation resets the member
        (NOT_COORDINATOR, kafka_errors.NotCoordinatorError, "dead"),
        (ILLEGAL_GENERATION, kafka_errors.CommitFailedError, "reset"),
        (REBALANCE_IN_PROGRESS, kafka_errors.CommitFailedError, "rejoin"),
    ],
)
@pytest.mark.parametrize("set_up", [False, True], ids=["first-commit", "on-a-set-up-connection"])
def test_an_error_answer_is_handled_by_kafka_pythons_coordinator(
    broker: FakeGroupCoordinator, code: int, raised: type[Exception], membership: str, set_up: bool
) -> None:
    coordinator, conn = _connected_to(broker)
    try:
        if set_up:
            conn.commit({("orders", 0): 41}, timeout_s=10)
        broker.error_code = code
        with pytest.raises(raised):
            conn.commit({("orders", 0): 42}, timeout_s=10)
    finally:
        conn.close()
    assert coordinator.handled_on == ["io-thread"]
    observed = {
        "dead": bool(coordinator.dead),
        "reset": bool(coordinator.resets),
        "rejoin": coordinator.rejoins > 0,
    }
    assert observed == {k: k == membership for k in observed}


def test_a_moved_coordinator_is_followed(broker: FakeGroupCoordinator) -> None:
    other = FakeGroupCoordinator()
    cluster, coordinator = Cluster(), Coordinator()
    cluster.ports.update({"coordinator-1": broker.port, "coordinator-2": other.port})
    conn = _connection(coordinator, cluster)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)
        coordinator.coordinator_id = "coordinator-2"  # kafka-python found the group elsewhere
        conn.commit({("orders", 0): 2}, timeout_s=10)
        assert conn.address == ("127.0.0.1", other.port)
    finally:
        conn.close()
        other.close()
    assert [_sent(r) for r in broker.commits] == [{("orders", 0): 1}]
    assert [_sent(r) for r in other.commits] == [{("orders", 0): 2}]


@pytest.mark.parametrize("missing", ["generation", "coordinator", "address"])
def test_without_a_stable_generation_or_a_coordinator_kafka_pythons_path_is_taken(
    broker: FakeGroupCoordinator, missing: str
) -> None:
    cluster, coordinator = Cluster(), Coordinator()
    cluster.ports["coordinator-1"] = broker.port
    if missing == "generation":
        coordinator.stable = None  # kafka-python: rebalancing or unjoined
    elif missing == "coordinator":
        coordinator.coordinator_id = None
    else:
        cluster.ports.clear()
    conn = _connection(coordinator, cluster)
    try:
        with pytest.raises(CommitConnectionUnavailable):
            conn.commit({("orders", 0): 1}, timeout_s=10)
    finally:
        conn.close()
    assert broker.commits == []


def test_an_unanswered_commit_is_left_to_kafka_pythons_path_in_time(broker: FakeGroupCoordinator) -> None:
    broker.silent = True
    _, conn = _connected_to(broker)
    start = time.monotonic()
    try:
        with pytest.raises(CommitConnectionUnavailable):
            conn.commit({("orders", 0): 1}, timeout_s=0.5)
    finally:
        conn.close()
    assert len(broker.commits) == 1  # sent once, never answered
    assert time.monotonic() - start < 10  # bounded (0.5 s asked; generous for a loaded machine)


def test_a_dropped_connection_is_reopened(broker: FakeGroupCoordinator) -> None:
    _, conn = _connected_to(broker)
    try:
        conn.commit({("orders", 0): 1}, timeout_s=10)
        broker.drop_connections()
        done = _committed_on_a_new_connection(conn, {("orders", 0): 2})
    finally:
        conn.close()
    assert done and broker.connections == 2
    assert _sent(broker.commits[-1]) == {("orders", 0): 2}


def test_kafka_pythons_pieces_a_group_view_stands_for_are_there() -> None:
    # what a GroupView over kafka-python 3.0.12 reads; fails loudly when a release moves them
    handler = ConsumerCoordinator._handle_offset_commit_response
    assert list(inspect.signature(handler).parameters) == ["self", "offsets", "send_time", "response"]
    assert "self.coordinator_id = None" in inspect.getsource(BaseCoordinator.__init__)
    assert list(inspect.signature(BaseCoordinator.generation_if_stable).parameters) == ["self"]
    generation = Generation(5, "member-b", "failover")
    assert (generation.generation_id, generation.member_id) == (5, "member-b")
