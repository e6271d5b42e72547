"""The soak's network faults: each kind's toxics in Toxiproxy's own terms (its README's toxic types and
attribute names), a broker's roles read from a snapshot, and each kind applied for its hold on the target
broker's proxy and removed after it — through the proxied cluster's real ``ClusterFaults`` handle over a
stand-in Toxiproxy client that records what the HTTP API would have been asked."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_placement.errors import FaultProxyError
from kafka_placement.replicas.placement_audit import ClusterSnapshot, PartitionState
from kafka_placement.soak.events import Event, Fault
from kafka_placement.soak.faults import FaultInjector
from kafka_placement.soak.proxyfault import roles_in, toxics_for
from kafka_placement.soak.schedule import NETWORK_KINDS, PlannedFault
from kafka_placement.testing.fault_proxy import ClusterFaults
from kafka_placement.testing.toxiproxy import Proxy, Toxic
from kafka_placement.vocabulary import TopicPartition

# (type, stream, attributes) per kind, as Toxiproxy's README names them: latency {latency, jitter} ms,
# bandwidth {rate} KB/s, reset_peer {timeout} ms, timeout {timeout} ms (0: never closes),
# slow_close {delay} ms
EXPECTED = {
    "net-latency": {
        ("latency", "upstream", (("jitter", 200), ("latency", 300))),
        ("latency", "downstream", (("jitter", 200), ("latency", 300))),
    },
    "net-bandwidth": {("bandwidth", "upstream", (("rate", 8),)), ("bandwidth", "downstream", (("rate", 8),))},
    "net-reset": {("reset_peer", "upstream", (("timeout", 500),))},
    "net-silent": {("timeout", "downstream", (("timeout", 0),))},
    "net-slow-close": {
        ("slow_close", "upstream", (("delay", 5000),)),
        ("slow_close", "downstream", (("delay", 5000),)),
    },
}


@pytest.mark.parametrize("kind", NETWORK_KINDS)
def test_each_kind_is_the_toxics_stated(kind: str) -> None:
    toxics = toxics_for(kind)
    assert {(t.type, t.stream, tuple(sorted(t.attributes.items()))) for t in toxics} == EXPECTED[kind]
    assert len({t.name for t in toxics}) == len(toxics)  # removable one by one
    assert all(t.toxicity == 1.0 for t in toxics)


def test_a_kind_that_is_no_network_fault_has_no_toxics() -> None:
    with pytest.raises(KeyError):
        toxics_for("broker-kill")


def java_hash(text: str) -> int:
    """Java's String.hashCode (a 32-bit wrap of s[0]*31^(n-1) + ... + s[n-1]), written out here."""
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


def snapshot(offsets_leaders: list[int | None], topic_leaders: dict[int, int | None]) -> ClusterSnapshot:
    parts = {
        TopicPartition("__consumer_offsets", p): PartitionState((leader or 0,), leader, ())
        for p, leader in enumerate(offsets_leaders)
    }
    parts.update(
        {
            TopicPartition("t", p): PartitionState((leader or 0,), leader, ())
            for p, leader in topic_leaders.items()
        }
    )
    return ClusterSnapshot((), parts)


def test_a_brokers_roles_are_the_partitions_it_leads_and_the_groups_it_coordinates() -> None:
    groups = ["kp-soak-abc123-fo-kp", "kp-soak-abc123-coop", "kp-soak-abc123-fo-cf"]
    # 50 offsets partitions (Kafka's default) led round-robin by brokers 0-5; partition 7 leaderless
    leaders: list[int | None] = [p % 6 for p in range(50)]
    leaders[7] = None
    coordinator = {g: leaders[abs(java_hash(g)) % 50] for g in groups}
    snap = snapshot(leaders, {0: 3, 1: 4, 2: 3, 5: None})
    for broker in range(6):
        roles = roles_in(snap, broker, "t", groups)
        assert roles.leads == {3: (0, 2), 4: (1,)}.get(broker, ())
        assert roles.coordinates == tuple(sorted(g for g in groups if coordinator[g] == broker))
    assert sum(len(roles_in(snap, b, "t", groups).coordinates) for b in range(6)) == sum(
        1 for g in groups if coordinator[g] is not None
    )


def test_without_offsets_partitions_a_broker_coordinates_nothing() -> None:
    assert roles_in(snapshot([], {0: 1}), 1, "t", ["g"]).coordinates == ()


class FakeToxiproxy:
    """The HTTP API as :class:`~kafka_placement.testing.toxiproxy.ToxiproxyClient` speaks it: proxies
    and their toxics, every call recorded; ``refuse`` makes add_toxic answer an error as Toxiproxy does."""

    def __init__(self, refuse: str | None = None) -> None:
        self.toxics: dict[str, dict[str, Toxic]] = {}
        self.calls: list[tuple[str, str, str]] = []
        self.refuse = refuse
        #: every proxy's toxics when the first removal came: what was on during the hold
        self.before_removal: dict[str, dict[str, Toxic]] | None = None

    def create_proxy(self, name: str, listen: str, upstream: str, *, enabled: bool = True) -> Proxy:
        self.toxics[name] = {}
        return Proxy(name, f"127.0.0.1:{40000 + len(self.toxics)}", upstream)

    def add_toxic(self, proxy: str, toxic: Toxic) -> Toxic:
        self.calls.append(("add", proxy, toxic.name))
        if toxic.type == self.refuse:
            raise FaultProxyError(f"toxic type {toxic.type} refused (stand-in)")
        self.toxics[proxy][toxic.name] = toxic
        return toxic

    def remove_toxic(self, proxy: str, name: str) -> None:
        self.calls.append(("remove", proxy, name))
        if self.before_removal is None:
            self.before_removal = {p: dict(t) for p, t in self.toxics.items()}
        del self.toxics[proxy][name]


class Admin:
    """kafka-python's describe_topics answers: soak partition 7 led by broker 3; ``__consumer_offsets``
    has one partition (every group's coordinator), led by broker 5."""

    def describe_cluster(self) -> dict[str, Any]:
        return {"brokers": [{"broker_id": b, "rack": None} for b in range(6)]}

    def describe_topics(self, topics: list[str]) -> list[dict[str, Any]]:
        leaders = {"t": {7: 3}, "__consumer_offsets": {0: 5}}
        return [
            {
                "name": name,
                "error_code": 0,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": p,
                        "leader_id": leader,
                        "replica_nodes": [leader],
                        "isr_nodes": [leader],
                    }
                    for p, leader in leaders[name].items()
                ],
            }
            for name in topics
        ]


def injector(client: FakeToxiproxy | None, events: list[Event]) -> FaultInjector:
    proxies = None
    if client is not None:
        proxies = ClusterFaults(client, "kp-test")  # type: ignore[arg-type]
        proxies.create_proxies({b: 39090 + b for b in range(6)})
    return FaultInjector(
        None,
        None,
        Admin(),
        "t",
        events.append,
        None,  # type: ignore[arg-type]
        proxies=proxies,
        groups=("kp-soak-x-coop", "kp-soak-x-fo-kp"),
        prefix="kp-soak-x",
    )


@pytest.mark.parametrize("kind", NETWORK_KINDS)
@pytest.mark.parametrize(
    ("target", "broker"), [("broker-2", 2), ("leader-of-7", 3), ("coordinator-of-coop", 5)]
)
def test_each_kind_is_on_the_targets_proxy_for_the_hold_then_removed(
    kind: str, target: str, broker: int
) -> None:
    client = FakeToxiproxy()
    events: list[Event] = []
    assert injector(client, events).apply(PlannedFault(20.0, kind, target, 0.4)) is True
    proxy = f"kp-test-broker-{broker}"
    seen = client.before_removal
    assert seen is not None
    on_target = {(t.type, t.stream, tuple(sorted(t.attributes.items()))) for t in seen[proxy].values()}
    assert on_target == EXPECTED[kind]
    assert all(not toxics for name, toxics in seen.items() if name != proxy)  # only the target's
    assert all(not toxics for toxics in client.toxics.values())  # removed after the hold
    faults = [e for e in events if isinstance(e, Fault)]
    assert [(f.kind, f.target) for f in faults] == [
        (kind, f"broker-{broker}"),
        (f"{kind}-undone", f"broker-{broker}"),
    ]
    assert faults[1].t - faults[0].t >= 0.4
    # the roles it was logged with: what broker 3 and 5 were in Admin's answers
    assert (faults[0].leads, faults[0].coordinates) == {
        2: ((), ()),
        3: ((7,), ()),
        5: ((), ("kp-soak-x-coop", "kp-soak-x-fo-kp")),
    }[broker]


def test_without_proxies_a_network_fault_is_skipped_and_logged() -> None:
    events: list[Event] = []
    assert injector(None, events).apply(PlannedFault(20.0, "net-silent", "broker-1", 5.0)) is False
    faults = [(e.kind, e.target) for e in events if isinstance(e, Fault)]
    assert faults == [("net-silent-skipped", "broker-1")]


def test_a_toxic_refused_halfway_leaves_nothing_and_is_logged_refused() -> None:
    # net-latency adds two toxics; the stand-in refuses the type, so the first add fails; with a kind
    # whose second add fails the first must be taken off again
    client = FakeToxiproxy(refuse="latency")
    events: list[Event] = []
    assert injector(client, events).apply(PlannedFault(20.0, "net-latency", "broker-0", 0.1)) is True
    assert [(e.kind, e.target) for e in events if isinstance(e, Fault)] == [
        ("net-latency", "broker-0"),
        ("net-latency-refused", "broker-0"),
    ]
    assert all(not toxics for toxics in client.toxics.values())


def test_a_second_toxic_refused_takes_the_first_off_again() -> None:
    class SecondRefused(FakeToxiproxy):
        def add_toxic(self, proxy: str, toxic: Toxic) -> Toxic:
            if sum(1 for c in self.calls if c[0] == "add") == 1:
                self.calls.append(("add", proxy, toxic.name))
                raise FaultProxyError("proxy busy (stand-in)")
            return super().add_toxic(proxy, toxic)

    client = SecondRefused()
    events: list[Event] = []
    assert injector(client, events).apply(PlannedFault(20.0, "net-slow-close", "broker-4", 0.1)) is True
    assert [c[0] for c in client.calls] == ["add", "add", "remove"]
    assert all(not toxics for toxics in client.toxics.values())
    assert [e.kind for e in events if isinstance(e, Fault)] == ["net-slow-close", "net-slow-close-refused"]


def test_a_broker_fault_may_target_a_groups_coordinator_too() -> None:
    # a hand-made plan (the schedule draws coordinators for network faults only): broker 5 coordinates
    events: list[Event] = []
    killed: list[int] = []

    class Cluster:
        def kill_broker(self, broker: int) -> None:
            killed.append(broker)

    class Restarts:
        def start(self, broker: int, kind: str, target: str) -> None:
            pass

    fi = FaultInjector(
        Cluster(),
        None,
        Admin(),
        "t",
        events.append,
        Restarts(),  # type: ignore[arg-type]
        groups=("kp-soak-x-coop",),
        prefix="kp-soak-x",
    )
    assert fi.apply(PlannedFault(20.0, "broker-kill", "coordinator-of-coop", 0.0)) is True
    assert killed == [5]
    assert [(e.kind, e.target, e.coordinates) for e in events if isinstance(e, Fault)] == [
        ("broker-kill", "broker-5", ("kp-soak-x-coop",))
    ]
