"""The soak's network partition on the live session cluster: one broker cut off with iptables on
loopback (its listener port and its container's cgroup), then healed.

Shown: meanwhile a client bootstrapping from it gets no answer while another broker answers; with full
isolation (its own traffic dropped too) the controller stops hearing its heartbeats and fences it (it
leaves describe_cluster), with a ports-only one it stays listed; after the heal it answers again, is
listed again, and no rule with this process's tag is left (read from ``iptables -S`` itself).
Bounds, stated (a loaded 2-core machine): fencing after broker.session.timeout.ms (6 s) within 60 s;
back within 90 s.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from collections.abc import Callable

import pytest

from kafka_placement.soak.netfault import NetworkPartitions
from kafka_placement.testing.cluster import KafkaCluster
from kafka_placement.testing.probe import describe_brokers, transient_errors

pytestmark = [pytest.mark.integration]


def _until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout_s:.0f} s: {what}")
        time.sleep(0.5)


def _settle(condition: Callable[[], bool], timeout_s: float) -> None:
    """Wait until ``condition`` or ``timeout_s``, not failing: cleanup after a failure must not hide it."""
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.5)


def test_a_partitioned_broker_is_unreachable_then_heals(kafka_cluster: KafkaCluster) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    network = NetworkPartitions()
    reason = network.unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"network partitions are not possible here: {reason}")
        pytest.skip(f"network partitions are not possible here: {reason}")
    kafka_cluster.wait_ready(120.0)
    cut, other = kafka_cluster.broker_ids[-1], kafka_cluster.broker_ids[0]
    port = kafka_cluster.layout.broker_ports[cut]
    rdkafka = kafka_cluster.librdkafka_settings()
    kp_extra = {k: v for k, v in kafka_cluster.kafka_python_settings().items() if k != "bootstrap_servers"}

    def answers(broker: int, timeout_s: float = 5.0) -> bool:
        """A fresh client bootstrapping from ``broker`` alone gets an answer from that broker itself.

        DescribeConfigs of the BROKER resource ``broker``: librdkafka sends it to that broker and no
        other, and a broker describes only itself (its ``node.id`` in the answer). Not list_topics: a
        fresh librdkafka 2.16 client drops its bootstrap connection once it has learned the brokers
        and asks a randomly chosen learned one — the cut broker included, before it is fenced.
        """
        admin = AdminClient({**rdkafka, "bootstrap.servers": kafka_cluster.broker_address(broker)})
        resource = ConfigResource(ResourceType.BROKER, str(broker))
        try:
            described = admin.describe_configs([resource], request_timeout=timeout_s)[resource]
            node_id = described.result(timeout=timeout_s + 5.0).get("node.id")
        except (KafkaException, TimeoutError):
            return False
        return node_id is not None and node_id.value == str(broker)

    def listed(broker: int) -> bool | None:
        """Whether describe_cluster, bootstrapped from ``other``, lists ``broker`` (None: no answer)."""
        try:
            seen = describe_brokers(kafka_cluster.broker_address(other), 5.0, client_kwargs=kp_extra)
        except transient_errors():
            return None
        return broker in seen

    _until(
        lambda: answers(cut) and answers(other) and listed(cut) is True, 60.0, "both brokers answer at first"
    )
    try:
        with network.guarded():
            rules = network.cut([port], kafka_cluster.broker_pid(cut))
            assert len(network.left()) == len(rules.add)
            with pytest.raises(OSError):  # TimeoutError: the SYN is dropped, nothing refuses it
                socket.create_connection(("127.0.0.1", port), timeout=3.0).close()
            assert not answers(cut)
            started = time.monotonic()
            assert answers(other, 30.0), f"broker {other} did not answer within 30 s while {cut} was cut off"
            print(f"broker {other} answered in {time.monotonic() - started:.2f} s while {cut} was cut off")
            if rules.isolation == "full":  # its heartbeats do not reach the controller either
                _until(lambda: listed(cut) is False, 60.0, f"broker {cut} fenced by the controller")
            else:  # a gray partition: the controller still hears it
                seen: list[bool | None] = []
                _until(
                    lambda: seen.append(listed(cut)) or seen[-1] is not None,
                    60.0,
                    "an answer from describe_cluster",
                )
                assert seen[-1] is True
            healed = network.heal()
        assert healed == len(rules.add)
        print(f"partition of broker {cut} (port {port}): isolation {rules.isolation}, {healed} rules")
        _until(lambda: answers(cut), 90.0, f"broker {cut} answers again after the heal")
        _until(lambda: listed(cut) is True, 90.0, f"broker {cut} listed again after the heal")
        kafka_cluster.wait_ready(90.0)
        assert network.left() == []
        listing = subprocess.run(["iptables", "-w", "-S"], capture_output=True, text=True, check=True).stdout
        assert re.search(re.escape(network.tag) + r"(?!\d)", listing) is None, listing
    finally:  # whatever failed above (guarded() has healed): the next module gets broker `cut` back
        _settle(lambda: listed(cut) is True, 120.0)
