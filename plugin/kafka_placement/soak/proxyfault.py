"""The soak's network faults: which Toxiproxy toxics each ``net-*`` kind puts on one broker's proxy, and
what a broker was to the run when a fault hit it (the soak partitions it led, the groups it coordinated).

Toxiproxy's toxics and their units are its README's ("Toxics"); the builders are
:mod:`kafka_placement.testing.toxiproxy`. The proxied cluster fronts each broker's *client* listener
only, so a toxic slows, resets or silences what producers, members and the runner's admin client send
to and get from that broker, while replication and the controller link go on (docs/testing.md,
"Network faults (Toxiproxy)"). Sans-I/O apart from :func:`broker_roles`, which asks the cluster.

The values, and why:

- ``net-latency``: 300 ms ± 200 ms each way (``latency`` on both streams): a request waits 0.2-1 s
  for its answer — a slow cross-zone link, well under the clients' request timeouts (10-30 s), so
  nothing should fail, only slow down;
- ``net-bandwidth``: 8 KB/s each way: a fetch answer of a few hundred records takes seconds; heartbeats
  queue behind it on the same connection (the coordinator's, when it is this broker);
- ``net-reset``: ``reset_peer`` on the client's stream — every connection is reset (TCP RST) on its first
  data after 500 ms, new ones too, for the hold: what ended kafka-python's metadata loop (issue 45);
- ``net-silent``: ``timeout`` 0 on the broker's answers — the requests arrive and are acted on (a
  heartbeat keeps the session alive), but no answer comes back until the toxic is removed and the
  connection stays open: the half-open link no error reports, only a client's own request timeout;
- ``net-slow-close``: ``slow_close`` 5 s each way — a connection's close reaches the other side 5 s
  late (a client that gave up on a request reconnects while its old socket lingers).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafka_placement.soak.health import OFFSETS_TOPIC, coordinator_partition
from kafka_placement.testing.toxiproxy import Toxic, bandwidth, latency, reset_peer, slow_close, timeout

__all__ = ["BrokerRoles", "broker_roles", "coordinator_of", "roles_in", "toxics_for"]


def toxics_for(kind: str) -> tuple[Toxic, ...]:
    """The toxics of a ``net-*`` kind (module docstring); KeyError for another kind."""
    both = ("upstream", "downstream")
    table: dict[str, tuple[Toxic, ...]] = {
        "net-latency": tuple(latency(300, jitter_ms=200, stream=s) for s in both),
        "net-bandwidth": tuple(bandwidth(8, stream=s) for s in both),
        "net-reset": (reset_peer(timeout_ms=500, stream="upstream"),),
        "net-silent": (timeout(0, stream="downstream"),),
        "net-slow-close": tuple(slow_close(5000, stream=s) for s in both),
    }
    return table[kind]


@dataclass(frozen=True)
class BrokerRoles:
    """What one broker was when a fault hit it: the soak topic's partitions it led and the groups
    (full ids) whose coordinator it was."""

    leads: tuple[int, ...]
    coordinates: tuple[str, ...]


def roles_in(snapshot: Any, broker: int, topic: str, groups: Iterable[str]) -> BrokerRoles:
    """``broker``'s roles in a :class:`~kafka_placement.replicas.placement_audit.ClusterSnapshot` of
    ``topic`` and ``__consumer_offsets`` (a group's coordinator is the leader of its offsets partition)."""
    leads = tuple(
        sorted(
            tp.partition
            for tp, state in snapshot.partitions.items()
            if tp.topic == topic and state.leader == broker
        )
    )
    offsets = {
        tp.partition: state.leader for tp, state in snapshot.partitions.items() if tp.topic == OFFSETS_TOPIC
    }
    coordinates = tuple(
        sorted(g for g in groups if offsets and offsets.get(coordinator_partition(g, len(offsets))) == broker)
    )
    return BrokerRoles(leads, coordinates)


def broker_roles(adm: Any, broker: int, topic: str, groups: Iterable[str]) -> BrokerRoles | None:
    """:func:`roles_in` now, as ``broker`` itself sees them (another broker's metadata can lag by tens of
    seconds under the soak's load: seed 36 recorded a broker killed while it led 12 partitions and
    coordinated two groups as leading nothing); the cluster's answer when it does not answer; None
    when nobody did (the fault's roles unknown)."""
    from kafka_placement.clients.kafka_python.admin import snapshot, snapshot_seen_by

    try:
        return roles_in(snapshot_seen_by(adm, broker, [topic, OFFSETS_TOPIC]), broker, topic, groups)
    except Exception:  # kafka-python's errors: a broker already faulted or slow
        pass
    try:
        snap = snapshot(adm, [topic, OFFSETS_TOPIC], retry_s=0.0)
    except Exception:  # kafka-python's errors, a cluster under faults: the roles stay unknown
        return None
    return roles_in(snap, broker, topic, groups)


def coordinator_of(adm: Any, group: str) -> int | None:
    """The broker leading ``group``'s ``__consumer_offsets`` partition now; None when unknown."""
    from kafka_placement.clients.kafka_python.admin import snapshot

    try:
        snap = snapshot(adm, [OFFSETS_TOPIC], retry_s=0.0)
    except Exception:  # kafka-python's errors, a cluster under faults
        return None
    offsets = {
        tp.partition: state.leader for tp, state in snap.partitions.items() if tp.topic == OFFSETS_TOPIC
    }
    if not offsets:
        return None
    return offsets.get(coordinator_partition(group, len(offsets)))
