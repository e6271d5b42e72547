"""clients/kafka_python/reassignment.py against a fake admin (the live behaviour is proven in
integration_tests/test_reassignment_safety_live.py)."""

from __future__ import annotations

from typing import Any

import pytest
from kafka import TopicPartition as KTP
from kafka import errors as kerrors

from kafka_placement.clients.kafka_python import reassignment as kp
from kafka_placement.errors import ClusterError
from kafka_placement.replicas.throttles import movement_map
from kafka_placement.vocabulary import TopicPartition as TP


class FakeAdmin:
    def __init__(self) -> None:
        self.in_flight: dict[Any, dict[str, list[int]]] = {}
        self.log_dirs: list[dict[str, Any]] = []
        self.log_dir_answers: list[Any] = []
        self.log_dir_requests: list[dict[Any, str]] = []

    def list_partition_reassignments(self, wanted: Any = None) -> dict[Any, dict[str, list[int]]]:
        return {k: v for k, v in self.in_flight.items() if wanted is None or k in wanted}

    def describe_cluster(self) -> dict[str, Any]:
        return {"brokers": [{"broker_id": b["broker"], "rack": None} for b in self.log_dirs]}

    def describe_log_dirs(self, topics: Any = None, brokers: Any = None) -> list[dict[str, Any]]:
        return [b for b in self.log_dirs if brokers is None or b["broker"] in brokers]

    def alter_replica_log_dirs(self, request: dict[Any, str]) -> dict[Any, Any]:
        self.log_dir_requests.append(dict(request))
        answer = self.log_dir_answers.pop(0)
        return dict.fromkeys(request, answer)


def _dirs(broker: int, path: str, parts: list[tuple[int, int, bool]]) -> dict[str, Any]:
    return {
        "broker": broker,
        "log_dirs": [
            {
                "error_code": 0,
                "log_dir": path,
                "topics": [
                    {
                        "name": "t",
                        "partitions": [
                            {"partition_index": p, "partition_size": size, "is_future_key": future}
                            for p, size, future in parts
                        ],
                    }
                ],
            }
        ],
    }


def test_ongoing_reads_the_original_lists() -> None:
    admin = FakeAdmin()
    admin.in_flight = {KTP("t", 0): {"replicas": [2, 1, 0], "adding_replicas": [2], "removing_replicas": [0]}}
    (state,) = kp.ongoing(admin).values()
    assert state.original == (1, 0) and state.adding == (2,)
    assert kp.ongoing(admin, []) == {}


def test_status_counts_done_partitions_and_bytes_left_per_new_replica() -> None:
    admin = FakeAdmin()
    admin.in_flight = {KTP("t", 0): {"replicas": [2, 1, 0], "adding_replicas": [2], "removing_replicas": [0]}}
    admin.log_dirs = [
        _dirs(0, "/a", [(0, 1000, False)]),
        _dirs(1, "/a", [(0, 1000, False)]),
        _dirs(2, "/b", [(0, 300, False)]),
    ]
    moves = movement_map({TP("t", 0): [2, 1], TP("t", 1): [1, 2]}, {TP("t", 0): [0, 1], TP("t", 1): [1, 0]})
    status = kp.status(admin, [TP("t", 0), TP("t", 1)], moves, started=0.0)
    assert (status.done, status.total, status.in_flight) == (1, 2, (TP("t", 0),))
    assert status.bytes_left == 700  # partition 0 is 1000 B; broker 2 holds 300 of it


def test_replica_dirs_tell_current_from_future() -> None:
    admin = FakeAdmin()
    admin.log_dirs = [_dirs(0, "/a", [(0, 10, False)]), _dirs(0, "/b", [(0, 4, True)])]
    assert kp.replica_dirs(admin, ["t"]) == {(TP("t", 0), 0): kp.ReplicaDir("/a", "/b", 10)}


def test_alter_log_dirs_retries_while_the_replica_is_not_there_yet() -> None:
    admin = FakeAdmin()
    admin.log_dir_answers = [kerrors.ReplicaNotAvailableError, kerrors.NoError]
    kp.alter_log_dirs(admin, {(TP("t", 0), 2): "/b"}, timeout_s=5)
    assert len(admin.log_dir_requests) == 2


def test_alter_log_dirs_reports_a_real_error_and_a_timeout() -> None:
    admin = FakeAdmin()
    admin.log_dir_answers = [kerrors.LogDirNotFoundError]
    with pytest.raises(
        ClusterError, match="could not move t-0 on broker 2 to log dir '/nope': LogDirNotFound"
    ):
        kp.alter_log_dirs(admin, {(TP("t", 0), 2): "/nope"}, timeout_s=5)
    admin.log_dir_answers = [kerrors.ReplicaNotAvailableError] * 100
    with pytest.raises(
        ClusterError, match="Timed out before log directory moves could be started for: 2-t-0"
    ):
        kp.alter_log_dirs(admin, {(TP("t", 0), 2): "/b"}, timeout_s=0.3)


class ConfigAdmin:
    """alter/describe_configs where broker 1 is down (connection refused)."""

    def __init__(self) -> None:
        self.altered: list[str] = []

    error: Exception = kerrors.KafkaConnectionError("111 ECONNREFUSED")  # how broker 1 being down shows

    def alter_configs(self, resources: list[Any], **kwargs: Any) -> dict[str, dict[str, str]]:
        if any(r.resource_type.name == "BROKER" and r.name == "1" for r in resources):
            raise self.error
        self.altered += [f"{r.resource_type.name}:{r.name}" for r in resources]
        return {r.resource_type.name.lower(): {r.name: "OK"} for r in resources}

    def describe_configs(self, resources: list[Any], **kwargs: Any) -> dict[str, dict[str, Any]]:
        if any(r.resource_type.name == "BROKER" and r.name == "1" for r in resources):
            raise kerrors.KafkaConnectionError("111 ECONNREFUSED")
        out: dict[str, dict[str, Any]] = {}
        for r in resources:
            key = (
                "leader.replication.throttled.rate"
                if r.resource_type.name == "BROKER"
                else ("leader.replication.throttled.replicas")
            )
            out.setdefault(r.resource_type.name.lower(), {})[r.name] = {key: {"value": "5"}}
        return out


def test_a_broker_that_is_down_is_reported_not_fatal_when_clearing_and_reading() -> None:
    admin = ConfigAdmin()
    assert kp.clear_throttles(admin, [0, 1, 2], ["t"]) == [1]
    assert admin.altered == ["TOPIC:t", "BROKER:0", "BROKER:2"]
    found = kp.throttles(admin, [0, 1, 2], ["t"])
    assert found.unreachable == (1,) and set(found.brokers) == {0, 2} and set(found.topics) == {"t"}


@pytest.mark.parametrize(
    "error",
    [
        kerrors.KafkaConnectionError("111 ECONNREFUSED"),
        # a broker killed and not listed again yet: kafka-python does not even send the request (the soak's
        # reassignment met it: "cannot apply the reassignment …: UnknownBrokerIdError: 3")
        kerrors.UnknownBrokerIdError("1"),
    ],
)
def test_setting_throttles_with_a_broker_down_refuses_the_whole_move(error: Exception) -> None:
    admin = ConfigAdmin()
    admin.error = error
    with pytest.raises(ClusterError, match=r"broker\(s\) \[1\] unreachable; nothing was submitted"):
        kp.set_throttles(admin, rate=10, brokers=[0, 1], leader_lists={"t": "0:0"}, follower_lists={})


def test_retrying_forgets_a_dead_controller_and_gives_up_after_the_bound() -> None:
    class Flaky:
        _controller_id = 1
        calls = 0

    admin = Flaky()

    def call() -> str:
        admin.calls += 1
        if admin.calls < 3:
            raise kerrors.KafkaConnectionError("111 ECONNREFUSED")
        return "ok"

    assert kp.retrying(admin, call, timeout_s=10) == "ok" and admin.calls == 3
    assert admin._controller_id is None  # re-discovered on the next call

    def always_down() -> str:
        raise kerrors.KafkaConnectionError("111 ECONNREFUSED")

    with pytest.raises(kerrors.KafkaConnectionError):
        kp.retrying(admin, always_down, timeout_s=0.2)

    def wrong() -> str:
        raise kerrors.TopicAuthorizationFailedError("no")

    with pytest.raises(kerrors.TopicAuthorizationFailedError):  # not retried: waiting changes nothing
        kp.retrying(admin, wrong, timeout_s=10)


def test_a_controller_the_clients_metadata_dropped_is_forgotten_and_retried() -> None:
    class Stale:
        _controller_id = 2
        calls = 0

    admin = Stale()

    def call() -> str:
        admin.calls += 1
        if admin._controller_id == 2:  # kafka-python: the id is not in its broker metadata any more
            raise kerrors.UnknownBrokerIdError(2)
        return "sent"

    assert kp.retrying(admin, call, timeout_s=10) == "sent" and admin.calls == 2
    admin._controller_id = 2

    def timed_out() -> str:
        raise kerrors.KafkaTimeoutError("no answer")

    with pytest.raises(kerrors.KafkaTimeoutError):  # maybe sent: not retried when only pre-send errors are
        kp.retrying(admin, timed_out, timeout_s=10, retried=("UnknownBrokerIdError",))
