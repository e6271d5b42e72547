"""The cluster's health during a soak, sampled by the runner: which group coordinators cannot answer
(their ``__consumer_offsets`` partition has no leader) and how many partitions of the soak topic are
offline or under their min ISR.

Why: a broker killed while it is the only in-sync replica of a ``__consumer_offsets`` partition takes
that partition offline until it is back (no unclean election; with ``min.insync.replicas=1`` there is no
eligible leader replica either). No rebalance of the groups it coordinates can complete meanwhile, and
when it is back the members rejoin in whatever order they notice — the group's own membership change.
The 30-minute soak of session 16 met one such outage of about 150 s; without these samples it could
only be inferred. Session 22's secured run met another kind: for four minutes every FindCoordinator
answer named a broker that answered ``NOT_COORDINATOR``, while every ``__consumer_offsets`` partition had
a leader. So each sample also asks every soak group's coordinator, as a member would (FindCoordinator,
then OffsetFetch), and records the groups it refused.

:func:`coordinator_partition` is Kafka's mapping of a group to its partition; :func:`health_of` reads a
:class:`~kafka_placement.replicas.placement_audit.ClusterSnapshot` (sans-I/O);
:func:`coordinator_outages` turns the ``health`` events into each group's offline periods.
:class:`HealthSampler` is the thread that samples (its own admin client, bounded waits).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafka_placement.java import INT_MIN, java_string_hash
from kafka_placement.replicas.placement_audit import ClusterSnapshot
from kafka_placement.soak.events import Event, Health

__all__ = [
    "OFFSETS_TOPIC",
    "HealthSampler",
    "coordinator_outages",
    "coordinator_partition",
    "health_of",
    "unanswered_sample",
]

OFFSETS_TOPIC = "__consumer_offsets"


def coordinator_partition(group: str, offsets_partitions: int) -> int:
    """The ``__consumer_offsets`` partition whose leader coordinates ``group``: Kafka's
    ``Utils.abs(groupId.hashCode()) % partitions`` (``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0)."""
    code = java_string_hash(group)
    return (0 if code == INT_MIN else abs(code)) % offsets_partitions


def health_of(
    snapshot: ClusterSnapshot, topic: str, min_isr: int, t: float, refused_groups: Iterable[str] = ()
) -> Health:
    offline = tuple(
        sorted(
            tp.partition
            for tp, state in snapshot.partitions.items()
            if tp.topic == OFFSETS_TOPIC and state.leader is None
        )
    )
    mine = [state for tp, state in snapshot.partitions.items() if tp.topic == topic]
    return Health(
        offline,
        sum(1 for s in mine if s.leader is None),
        sum(1 for s in mine if s.leader is not None and len(s.isr) < min_isr),
        t,
        tuple(sorted(refused_groups)),
    )


def coordinator_outages(
    healths: Iterable[Health], partitions: Mapping[str, int], until: float
) -> dict[str, list[tuple[float, float]]]:
    """Per group (``partitions``: group → its coordinator partition), the periods its partition had no
    leader or its coordinator refused it, from the sample that saw it out to the first that saw it back
    (``until`` if none did)."""
    out: dict[str, list[tuple[float, float]]] = {group: [] for group in partitions}
    since: dict[str, float] = {}
    for health in sorted(healths, key=lambda h: h.t):
        for group, partition in partitions.items():
            offline = partition in health.offline_coordinators or group in health.refused_groups
            if offline and group not in since:
                since[group] = health.t
            elif not offline and group in since:
                out[group].append((since.pop(group), health.t))
    for group, start in since.items():
        out[group].append((start, until))
    return out


def unanswered_sample(last: Health | None, groups: Iterable[str], t: float) -> Health:
    """A sample that got no answer at all (no broker answered the metadata request in time): every group
    counted as refused — its members meet the same silence — and the rest as last seen. Seed 41 had no
    sample for 106 s while three groups' coordinators were loading, and the stuck-member checker, which
    excuses recorded outages only, blamed those groups' members."""
    return Health(
        last.offline_coordinators if last is not None else (),
        last.topic_offline if last is not None else 0,
        last.topic_under_min_isr if last is not None else 0,
        t,
        tuple(sorted(groups)),
    )


class HealthSampler(threading.Thread):
    """Samples every ``interval_s`` until :meth:`stop`; writes a ``health`` event when the health changed
    (and the first). A sample that fails (no broker answered in time) is written as
    :func:`unanswered_sample`, and the next one tries again with a fresh client."""

    def __init__(
        self,
        admin: Callable[[], Any],
        topic: str,
        min_isr: int,
        write: Callable[[Event], None],
        interval_s: float = 5.0,
        groups: Iterable[str] = (),
    ) -> None:
        super().__init__(name="soak-health", daemon=True)
        self._admin, self._topic, self._min_isr, self._write = admin, topic, min_isr, write
        self._groups = sorted(groups)  # asked of their coordinators at each sample
        self._interval_s = interval_s
        self._stopping = threading.Event()
        self.samples = self.failures = 0
        #: how many partitions ``__consumer_offsets`` has (from the samples; 0 before the first)
        self.offsets_partitions = 0

    def stop(self) -> None:
        self._stopping.set()

    def run(self) -> None:  # pragma: no cover - live (the soak's integration test)
        from kafka_placement.clients.kafka_python import admin as kp_admin
        from kafka_placement.clients.kafka_python.group_reads import refused_by_coordinators

        admin: Any = None
        last: tuple[Any, ...] | None = None
        seen: Health | None = None
        while not self._stopping.wait(self._interval_s):
            try:
                admin = admin or self._admin()
                snap = kp_admin.snapshot(admin, [OFFSETS_TOPIC, self._topic], retry_s=0.0)
                refused = refused_by_coordinators(admin, self._groups) if self._groups else {}
            except Exception:  # a cluster under faults: nothing answered; a fresh client next time
                self.failures += 1
                if admin is not None:
                    with contextlib.suppress(Exception):
                        admin.close()
                admin = None
                health = unanswered_sample(seen, self._groups, time.time())
            else:
                self.samples += 1
                self.offsets_partitions = sum(1 for tp in snap.partitions if tp.topic == OFFSETS_TOPIC)
                health = health_of(snap, self._topic, self._min_isr, time.time(), refused)
            seen = health
            key = (
                health.offline_coordinators,
                health.topic_offline,
                health.topic_under_min_isr,
                health.refused_groups,
            )
            if key != last:
                self._write(health)
                last = key
        if admin is not None:
            with contextlib.suppress(Exception):
                admin.close()
