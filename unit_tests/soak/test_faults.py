"""Applying a partition fault: logged at the broker it resolved to, the broker's listener port and
container cut off for the hold and healed, its return awaited like a restarted broker's; skipped (and
said so) where partitions are not possible; refused when iptables refuses."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.soak.events import Event, Fault
from kafka_placement.soak.faults import FaultInjector
from kafka_placement.soak.netfault import NetworkPartitions
from kafka_placement.soak.schedule import PlannedFault

from .test_netfault import CONTAINER, FakeIptables


class Layout:
    def __init__(self) -> None:
        self.broker_ports = {0: 39090, 3: 39093}


class Cluster:
    layout = Layout()

    def broker_pid(self, broker: int) -> int:
        return 1000 + broker


class Restarts:
    def __init__(self) -> None:
        self.started: list[tuple[int, str, str]] = []

    def start(self, broker: int, kind: str, target: str) -> None:
        self.started.append((broker, kind, target))


class Admin:
    """kafka-python 3's KafkaAdminClient answers (the shape ``clients.kafka_python.admin`` reads):
    partition 7's leader is broker 3."""

    def describe_cluster(self) -> dict[str, Any]:
        return {"brokers": [{"broker_id": b, "rack": None} for b in range(6)]}

    def describe_topics(self, topics: list[str]) -> list[dict[str, Any]]:
        return [
            {
                "name": topics[0],
                "error_code": 0,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": 7,
                        "leader_id": 3,
                        "replica_nodes": [3, 1, 5],
                        "isr_nodes": [3, 1, 5],
                    }
                ],
            }
        ]


def injector(network: NetworkPartitions | None, events: list[Event]) -> FaultInjector:
    return FaultInjector(
        Cluster(),
        None,
        Admin(),
        "t",
        events.append,
        Restarts(),  # type: ignore[arg-type]
        network=network,
    )


def test_a_partition_of_a_leader_cuts_its_port_and_cgroup_for_the_hold_then_heals(tmp_path: Path) -> None:
    (tmp_path / "1003").mkdir()
    (tmp_path / "1003" / "cgroup").write_text(f"0::{CONTAINER}\n")
    iptables = FakeIptables()
    seen_during: list[list[tuple[str, ...]]] = []

    def run(argv: Any) -> subprocess.CompletedProcess[str]:
        if argv[2] == "-S" and iptables.rules:  # the first listing after the cut is the heal's
            seen_during.append(list(iptables.rules))
        return iptables(argv)

    events: list[Event] = []
    fi = injector(NetworkPartitions(run, pid=4242, proc_root=tmp_path), events)
    assert fi.apply(PlannedFault(20.0, "broker-partition", "leader-of-7", 0.2)) is True
    assert [(e.kind, e.target) for e in events if isinstance(e, Fault)] == [("broker-partition", "broker-3")]
    (rules,) = seen_during[:1]
    assert {r[0] for r in rules} == {"INPUT", "OUTPUT"}
    assert any("39093" in r for r in rules) and any(CONTAINER in r for r in rules)
    assert iptables.rules == []  # healed
    assert fi.restarts.started == [(3, "broker-partition", "broker-3")]  # type: ignore[attr-defined]
    assert fi.isolations == ["full"]


def test_without_iptables_a_partition_is_skipped_and_logged() -> None:
    events: list[Event] = []
    fi = injector(None, events)
    fi.network_unavailable = "iptables needs root (this process runs as uid 1000)"
    assert fi.apply(PlannedFault(20.0, "broker-partition", "broker-0", 5.0)) is False
    assert [(e.kind, e.target) for e in events if isinstance(e, Fault)] == [
        ("broker-partition-skipped", "broker-0")
    ]
    assert fi.restarts.started == []  # type: ignore[attr-defined]


def test_a_refused_partition_is_logged_refused_with_nothing_left(tmp_path: Path) -> None:
    iptables = FakeIptables(refuse=["--dport"])
    events: list[Event] = []
    fi = injector(NetworkPartitions(iptables, pid=4242, proc_root=tmp_path), events)
    assert fi.apply(PlannedFault(20.0, "broker-partition", "broker-0", 5.0)) is True
    kinds = [e.kind for e in events if isinstance(e, Fault)]
    assert kinds == ["broker-partition", "broker-partition-refused"]
    assert iptables.rules == [] and fi.restarts.started == []  # type: ignore[attr-defined]


class TimingOutAdmin(Admin):
    """A cluster too loaded to answer in time: the first ``failures`` lookups time out."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def describe_topics(self, topics: list[str]) -> list[dict[str, Any]]:
        from kafka.errors import RequestTimedOutError

        self.calls += 1
        if self.calls <= self.failures:
            raise RequestTimedOutError("Request timed out after 14999 ms")
        return super().describe_topics(topics)


# calls: the leader lookups (at most 2) and then the one lookup of the broker's roles (no retry: a
# timed-out one leaves them unknown, None)
@pytest.mark.parametrize(
    ("failures", "expected_broker", "calls", "leads"), [(1, 3, 3, (7,)), (2, 0, 3, ()), (5, 0, 3, None)]
)
def test_a_leader_lookup_that_times_out_is_retried_then_falls_back_to_broker_0(
    failures: int, expected_broker: int, calls: int, leads: tuple[int, ...] | None
) -> None:
    # seen in a 30-minute secured soak at load average 141: describe_topics timed out and the
    # RequestTimedOutError ended the whole run ("unexpected RequestTimedOutError", exit 3)
    events: list[Event] = []
    admin = TimingOutAdmin(failures)
    fi = FaultInjector(
        Cluster(),
        None,
        admin,
        "t",
        events.append,
        Restarts(),  # type: ignore[arg-type]
        network=None,
    )
    fi.cluster.kill_broker = lambda broker: None  # type: ignore[attr-defined]
    assert fi.apply(PlannedFault(20.0, "broker-kill", "leader-of-7", 0.0)) is True
    assert [(e.kind, e.target) for e in events if isinstance(e, Fault)] == [
        ("broker-kill", f"broker-{expected_broker}")
    ]
    assert admin.calls == calls
    assert [e.leads for e in events if isinstance(e, Fault)] == [leads]
