"""The private parts of kafka-python that ``clients/confluent/kafka_python_group.py`` reaches, checked
against the installed kafka-python: each test fails loudly when a release renames or reshapes one. And
no other module of ``clients/confluent`` reaches one."""

from __future__ import annotations

import ast
import inspect
import socket
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kafka import KafkaConsumer
from kafka.cluster import ClusterMetadata
from kafka.consumer.subscription_state import SubscriptionState
from kafka.coordinator.base import BaseCoordinator, Generation
from kafka.coordinator.consumer import ConsumerCoordinator
from kafka.coordinator.heartbeat import Heartbeat
from kafka.net.connection import KafkaConnection, SaslReauthenticator
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kafka.net.transport import KafkaSSLTransport, KafkaTCPTransport
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_placement.clients.confluent import kafka_python_group
from kafka_placement.clients.confluent.kafka_python_group import PRIVATE_PARTS

_CONSUMER_TEST = "test_kafka_consumer_holds_its_coordinator_io_manager_metadata_and_subscription"
_COMMIT_TEST = "test_the_offset_commit_request_is_a_coroutine_taking_the_offsets"
#: each private part and the test here that checks it
COVERED = {
    "KafkaConsumer._coordinator": _CONSUMER_TEST,
    "KafkaConsumer._manager": _CONSUMER_TEST,
    "KafkaConsumer._cluster": _CONSUMER_TEST,
    "KafkaConsumer._subscription": _CONSUMER_TEST,
    "KafkaConsumer._manager._net": "test_the_io_managers_network_loop_can_sleep",
    "ConsumerCoordinator._generation": "test_the_coordinators_generation_says_when_it_is_lost",
    "ConsumerCoordinator._send_offset_commit_request": _COMMIT_TEST,
    "ConsumerCoordinator._handle_offset_commit_response": "test_the_offset_commit_answer_handler",
    "KafkaTCPTransport._write_buffer": "test_the_transport_sends_and_receives_on_the_calling_thread",
    "KafkaTCPTransport._sock_send": "test_the_transport_sends_and_receives_on_the_calling_thread",
    "KafkaTCPTransport._sock_recv": "test_the_transport_sends_and_receives_on_the_calling_thread",
    "KafkaTCPTransport._sock": "test_the_transport_sends_and_receives_on_the_calling_thread",
    "KafkaConnection._reauth": "test_the_connection_says_when_it_re_authenticates_and_throttles",
    "KafkaConnection._maybe_throttle": "test_the_connection_says_when_it_re_authenticates_and_throttles",
}


def _assigned_in_init(cls: type) -> dict[str, str]:
    """``self.<name> = <expression>`` in ``cls.__init__``, as source text per name."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))  # type: ignore[misc]
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    found[target.attr] = ast.unparse(node.value)
    return found


def test_kafka_consumer_holds_its_coordinator_io_manager_metadata_and_subscription() -> None:
    assigned = _assigned_in_init(KafkaConsumer)
    assert assigned.get("_coordinator", "").startswith("ConsumerCoordinator("), assigned.get("_coordinator")
    assert assigned.get("_subscription", "").startswith("SubscriptionState("), assigned.get("_subscription")
    assert assigned.get("_manager") == "self._client._manager", assigned.get("_manager")
    assert assigned.get("_cluster") == "self._manager.cluster", assigned.get("_cluster")
    # what is called on them
    assert callable(KafkaConnectionManager.call_soon)
    assert list(inspect.signature(KafkaConnectionManager.call_soon).parameters) == ["self", "coro", "args"]
    assert callable(ClusterMetadata.request_update) and callable(ClusterMetadata.partitions_for_topic)
    assert callable(SubscriptionState.assigned_partitions)


def test_the_io_managers_network_loop_can_sleep() -> None:
    assert _assigned_in_init(KafkaConnectionManager).get("_net") == "net"
    assert list(inspect.signature(NetworkSelector.sleep).parameters) == ["self", "delay"]


def test_the_coordinators_generation_says_when_it_is_lost() -> None:
    assigned = _assigned_in_init(BaseCoordinator)
    assert assigned.get("_generation") == "Generation.NO_GENERATION"
    # the sentinel kafka-python starts from (and resets to) is lost; a joined generation is not
    assert Generation.NO_GENERATION.is_lost() is True
    assert Generation(5, "member-1", "consumer").is_lost() is False
    heartbeat = Heartbeat(group_id="g", session_timeout_ms=10000, heartbeat_interval_ms=3000)
    assert isinstance(heartbeat.last_receive, float) and isinstance(heartbeat.last_reset, float)


def test_the_offset_commit_request_is_a_coroutine_taking_the_offsets() -> None:
    send = ConsumerCoordinator._send_offset_commit_request
    assert inspect.iscoroutinefunction(send)
    assert list(inspect.signature(send).parameters) == ["self", "offsets"]


def test_the_offset_commit_answer_handler() -> None:
    handle = ConsumerCoordinator._handle_offset_commit_response
    assert not inspect.iscoroutinefunction(handle)  # run on the IO thread by KafkaConnectionManager.run
    assert list(inspect.signature(handle).parameters) == ["self", "offsets", "send_time", "response"]
    assert list(inspect.signature(KafkaConnectionManager.run).parameters) == ["self", "coro", "args"]
    assert _assigned_in_init(BaseCoordinator).get("coordinator_id") == "None"  # public, read for its address
    assert callable(ClusterMetadata.broker_metadata) and callable(BaseCoordinator.generation_if_stable)


def test_an_answer_read_elsewhere_reaches_kafka_pythons_handler_with_its_own_offsets() -> None:
    # the commit connection hands (topic, partition) -> offset; kafka-python's handler reads its own
    # TopicPartition -> OffsetAndMetadata, as its _send_offset_commit_request builds them
    ran: list[tuple[Any, tuple[Any, ...]]] = []

    class Coordinator:
        def _handle_offset_commit_response(self, offsets: Any, send_time: float, response: Any) -> None:
            pass

    coordinator = Coordinator()
    manager = SimpleNamespace(run=lambda fn, *args: ran.append((fn, args)))
    consumer = SimpleNamespace(_coordinator=coordinator, _manager=manager, _cluster=None, _subscription=None)
    kafka_python_group.KafkaPythonGroup(consumer).handle_offset_commit_response(
        {("orders", 0): 42, ("audit", 2): 9}, 12.5, "answer"
    )
    [(fn, args)] = ran
    assert fn == coordinator._handle_offset_commit_response
    assert args == (
        {
            KafkaTopicPartition("orders", 0): OffsetAndMetadata(42, "", -1),
            KafkaTopicPartition("audit", 2): OffsetAndMetadata(9, "", -1),
        },
        12.5,
        "answer",
    )


def test_the_transport_sends_and_receives_on_the_calling_thread() -> None:
    assigned = _assigned_in_init(KafkaTCPTransport)
    assert assigned.get("_sock") == "sock" and assigned.get("_write_buffer") == "deque()"
    for cls in (KafkaTCPTransport, KafkaSSLTransport):  # TLS overrides both, with the same shape
        assert list(inspect.signature(cls._sock_send).parameters) == ["self"]
        assert list(inspect.signature(cls._sock_recv).parameters) == ["self"]
    # the idle-connection check reads the public times these two update
    assert "transport.last_activity" in inspect.getsource(KafkaConnectionManager._connection_idle_at)
    net = NetworkSelector()
    ours, theirs = socket.socketpair()
    try:
        ours.setblocking(False)
        transport = KafkaTCPTransport(net, ours)
        transport._write_buffer.append(b"request")
        assert transport._sock_send() == (7, None) and not transport._write_buffer
        assert theirs.recv(16) == b"request"
        assert transport._sock_recv() == (b"", None)  # nothing there yet: no error, no bytes
        theirs.sendall(b"answer")
        assert transport._sock_recv() == (b"answer", None)
        theirs.close()
        data, error = transport._sock_recv()  # the peer closed: an error, as the read task aborts on
        assert data == b"" and error is not None
    finally:
        ours.close()
        net.close()


def test_the_connection_says_when_it_re_authenticates_and_throttles() -> None:
    assigned = _assigned_in_init(KafkaConnection)
    assert assigned.get("_reauth") == "SaslReauthenticator(self)"
    assert isinstance(SaslReauthenticator.is_reauthenticating, property)
    # its own request path holds requests back on the same flag (what we follow)
    assert "self._reauth.is_reauthenticating" in inspect.getsource(KafkaConnection.send_request)
    assert list(inspect.signature(KafkaConnection._maybe_throttle).parameters) == ["self", "response"]
    # and it is what kafka.net runs on every answer it reads itself
    assert "self._maybe_throttle(response)" in inspect.getsource(KafkaConnection.data_received)
    net = NetworkSelector()
    try:
        connection = KafkaConnection(net)
        assert connection._reauth.is_reauthenticating is False
        assert not kafka_python_group.ready_for_exchange(connection)  # not connected yet
    finally:
        net.close()


def test_one_read_of_a_plain_socket_means_what_the_transports_reads_mean() -> None:
    # the exchange reads a plain TCP socket once per wake-up; each outcome must be what kafka.net's
    # own _sock_recv makes of it: bytes, nothing yet (no error), a closed peer (an error)
    outcomes = []
    for read in ("ours", "transports"):
        net = NetworkSelector()
        ours, theirs = socket.socketpair()
        try:
            ours.setblocking(False)
            transport = KafkaTCPTransport(net, ours)

            def receive(transport: Any = transport, ours: Any = ours, read: str = read) -> Any:
                return kafka_python_group._receive_once(ours) if read == "ours" else transport._sock_recv()

            nothing = receive()
            theirs.sendall(b"answer")
            answer = receive()
            theirs.close()
            closed = receive()
            outcomes.append((nothing, answer, closed[0], type(closed[1])))
        finally:
            ours.close()
            net.close()
    assert outcomes[0] == outcomes[1]
    assert outcomes[0] == (
        (b"", None),
        (b"answer", None),
        b"",
        kafka_python_group.kafka_errors.KafkaConnectionError,
    )


def test_every_listed_private_part_is_checked() -> None:
    assert set(PRIVATE_PARTS) == set(COVERED)  # a new private part needs its check here
    assert all(callable(globals().get(name)) for name in COVERED.values())


def test_no_other_confluent_module_reaches_a_kafka_python_private_part() -> None:
    private = {name.rsplit(".", 1)[1] for name in PRIVATE_PARTS}
    package = Path(kafka_python_group.__file__).parent
    found = []
    for path in sorted(package.glob("*.py")):
        if path.name == "kafka_python_group.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            # ours are self._name; kafka-python's are something_else._name
            if (
                isinstance(node, ast.Attribute)
                and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id == "self")
            ):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found
