"""Applying one planned fault of the soak to the live cluster or a member process, and undoing it.

Every fault is logged as a :class:`~kafka_placement.soak.events.Fault` when it hits (with the broker it
resolved to) and again as ``…-undone`` (a broker listed again, a member resumed or replaced),
``…-refused`` (the engine, the kernel or Toxiproxy would not do it) or ``…-skipped`` (not possible on this
machine: network partitions without root or iptables, the reason in the summary's ``network``; network
faults on a cluster without fault proxies). A fault on a broker or its links is logged with what that
broker was when it hit (:func:`~kafka_placement.soak.proxyfault.broker_roles`): the stuck-member checker
excuses only the members it concerned.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_placement.errors import ClusterError
from kafka_placement.soak.events import Event, Fault
from kafka_placement.soak.netfault import NetworkPartitions
from kafka_placement.soak.proxyfault import broker_roles, coordinator_of, toxics_for
from kafka_placement.soak.restarts import Restarts
from kafka_placement.soak.schedule import PlannedFault
from kafka_placement.vocabulary import TopicPartition

__all__ = ["FaultInjector"]


@dataclass
class FaultInjector:
    cluster: Any
    members: Any  # members.Members (duck-typed: the unit tests pass fakes)
    adm: Any
    topic: str
    write: Callable[[Event], None]
    restarts: Restarts
    #: the iptables adapter; None when no partition is planned or when partitions are not possible
    #: here (``network_unavailable`` says why): each is then skipped
    network: NetworkPartitions | None = None
    network_unavailable: str | None = None
    #: the isolation of each partition applied ("full" / "ports"), for the summary
    isolations: list[str] = field(default_factory=list)
    #: the proxied cluster's ``faults`` handle (:class:`~kafka_placement.testing.fault_proxy.ClusterFaults`);
    #: None on a cluster without proxies: each network fault is then skipped
    proxies: Any = None
    #: the run's group ids (full), for the roles a broker fault is logged with and ``coordinator-of-``
    groups: tuple[str, ...] = ()
    #: the group ids' prefix (``coordinator-of-<short>`` names ``<prefix>-<short>``)
    prefix: str = ""

    def apply(self, fault: PlannedFault) -> bool:
        """Inject ``fault`` and undo it (a broker's restart goes on in a thread); False when skipped."""
        if fault.kind.startswith("net-"):
            return self._network_fault(fault)
        if fault.kind.startswith("broker-"):
            return self._broker_fault(fault)
        name = fault.target
        if not self.members.running(name):  # it crashed: Members.watch starts it again
            self.write(Fault(f"{fault.kind}-skipped", name, time.time()))
            return False
        self.write(Fault(fault.kind, name, time.time()))
        self.members.signal(name, signal.SIGKILL if fault.kind == "member-kill" else signal.SIGSTOP, up=False)
        time.sleep(fault.hold_s)
        if fault.kind == "member-kill":
            self.members.spawn(name)
        else:
            self.members.signal(name, signal.SIGCONT, up=True)
        self.write(Fault(f"{fault.kind}-undone", name, time.time()))
        return True

    def _broker_fault(self, fault: PlannedFault) -> bool:
        if fault.kind == "broker-partition" and self.network is None:
            self.write(Fault(f"{fault.kind}-skipped", fault.target, time.time()))
            return False
        broker = self._resolve(fault.target)
        target = f"broker-{broker}"
        self._hit(fault.kind, broker)
        if fault.kind == "broker-kill":
            self.cluster.kill_broker(broker)
            time.sleep(fault.hold_s)
        elif fault.kind == "broker-pause":
            if not _paused(self.cluster, broker):
                self.write(Fault(f"{fault.kind}-refused", target, time.time()))
                return True
            time.sleep(fault.hold_s)
            self.cluster.resume_broker(broker)
        elif self.network is None or not self._partitioned(self.network, broker, fault.hold_s):
            self.write(Fault(f"{fault.kind}-refused", target, time.time()))  # iptables refused it
            return True
        self.restarts.start(broker, fault.kind, target)  # listed again (-undone) while the schedule goes on
        return True

    def _resolve(self, target: str) -> int:
        """The broker a target names now: ``broker-N``, ``leader-of-P`` or ``coordinator-of-G`` (the
        schedule draws the last for network faults; a hand-made plan may give it to any broker fault)."""
        if target.startswith("coordinator-of-"):
            group = f"{self.prefix}-{target.removeprefix('coordinator-of-')}"
            found = coordinator_of(self.adm, group)
            return 0 if found is None else found  # unknown: the fault still hits a broker
        return _broker_of(target, self.adm, self.topic)

    def _hit(self, kind: str, broker: int) -> None:
        """Log a fault on ``broker`` with its roles now (asked first: the fault may silence it)."""
        roles = broker_roles(self.adm, broker, self.topic, self.groups)
        leads, coordinates = (None, None) if roles is None else (roles.leads, roles.coordinates)
        self.write(Fault(kind, f"broker-{broker}", time.time(), leads, coordinates))

    def _network_fault(self, fault: PlannedFault) -> bool:
        """The kind's toxics on the target broker's proxy for the hold, then removed (also when
        interrupted); ``-refused`` when Toxiproxy refused one (nothing of it is left on the proxy)."""
        if self.proxies is None:
            self.write(Fault(f"{fault.kind}-skipped", fault.target, time.time()))
            return False
        broker = self._resolve(fault.target)
        self._hit(fault.kind, broker)
        from kafka_placement.errors import FaultProxyError

        try:
            with self.proxies.toxic(*toxics_for(fault.kind), brokers=[broker]):
                time.sleep(fault.hold_s)
        except FaultProxyError:
            self.write(Fault(f"{fault.kind}-refused", f"broker-{broker}", time.time()))
            return True
        self.write(Fault(f"{fault.kind}-undone", f"broker-{broker}", time.time()))
        return True

    def _partitioned(self, network: NetworkPartitions, broker: int, hold_s: float) -> bool:
        """Cut the broker off for ``hold_s`` and heal it (always, even when interrupted); False when
        iptables refused the rules (a failing heal is not caught: the run must not go on with a broker
        it cannot reconnect)."""
        ports = [self.cluster.layout.broker_ports[broker]]
        with network.guarded():  # healed on leaving, also by Ctrl-C or SIGTERM
            try:
                rules = network.cut(ports, self.cluster.broker_pid(broker))
            except OSError:
                return False
            self.isolations.append(rules.isolation)
            time.sleep(hold_s)
        return True


def _paused(cluster: Any, broker: int) -> bool:
    """Freeze the broker's container; False when the engine cannot (its cgroup freezer times out on a
    heavily loaded machine: "unable to freeze") after a second try."""
    for _attempt in (1, 2):
        try:
            cluster.pause_broker(broker)
            return True
        except Exception as exc:  # docker.errors.APIError (docker is imported only by the cluster)
            if "freeze" not in str(exc):
                raise
            time.sleep(1.0)
    return False


#: Attempts at finding a partition's leader for a ``leader-of-N`` fault (each bounded by the admin
#: client's request timeout): a loaded cluster may not answer one in time.
LEADER_LOOKUPS = 2


def _broker_of(target: str, adm: Any, topic: str) -> int:
    """The broker ``target`` names; for ``leader-of-N`` the partition's leader now — broker 0 when it
    has none or the cluster answered none of the lookups (the fault still hits a broker)."""
    if target.startswith("broker-"):
        return int(target.removeprefix("broker-"))
    from kafka.errors import KafkaError  # kafka-python: imported with the run, not with the module

    from kafka_placement.clients.kafka_python.admin import snapshot

    partition = TopicPartition(topic, int(target.removeprefix("leader-of-")))
    for _attempt in range(LEADER_LOOKUPS):
        try:
            state = snapshot(adm, [topic]).partitions.get(partition)
        except (KafkaError, ClusterError):  # e.g. RequestTimedOutError under load, a node that just died
            continue
        if state is not None and state.leader is not None:
            return state.leader
        break
    return 0
