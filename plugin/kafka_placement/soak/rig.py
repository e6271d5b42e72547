"""The soak's cluster stage: everything one run opens against the cluster — its log, an admin client, the
topic (RF 3, ``min.insync.replicas=2``), the groups' member processes (not started yet), the producers,
the fault injector (with the iptables adapter when the schedule cuts brokers off and this machine
allows it, and the cluster's Toxiproxy proxies when the schedule has network faults), the throttled
reassignment and the health sampler — and :meth:`Rig.shut_down`, which stops all of it in an order that
leaves nothing behind (no iptables rule, no toxic, no replica move, no producer writing to a closed log,
every broker running).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_placement.soak.events import Event, dump_event
from kafka_placement.soak.faults import FaultInjector
from kafka_placement.soak.health import HealthSampler
from kafka_placement.soak.load import PRODUCERS, ProducerSpec, ProducerThread
from kafka_placement.soak.members import GROUPS, Groups, Members
from kafka_placement.soak.netfault import NetworkPartitions
from kafka_placement.soak.operation import ThrottledReassignment
from kafka_placement.soak.restarts import RESTART_TIMEOUT_S, Restarts
from kafka_placement.soak.schedule import NETWORK_KINDS, PlannedFault

__all__ = ["MIN_ISR", "PRODUCER_JOIN_S", "Rig", "client_log", "kafka_python_log", "open_rig"]

#: how long the run waits for each producer thread to flush and end after stop()
PRODUCER_JOIN_S = 180.0
#: The soak topic's min.insync.replicas (RF 3): a write survives one broker's loss.
MIN_ISR = 2


@dataclass
class Rig:
    """What one run opened (see the module docstring)."""

    cluster: Any
    write: Callable[[Event], None]
    kafka_python: dict[str, Any]  # the cluster's kafka-python settings
    adm: Any  # kafka-python admin client
    members: Members
    producers: list[ProducerThread]
    restarts: Restarts
    injector: FaultInjector
    operation: ThrottledReassignment
    health: HealthSampler
    _watching: threading.Event
    _watcher: threading.Thread

    def start_members(self) -> None:
        """Every member process, and the thread that notices one that ends on its own."""
        for name in self.members.specs:
            self.members.spawn(name)
        self._watcher.start()

    def stop_producers(self) -> None:
        for producer in self.producers:
            producer.stop()
        for producer in self.producers:
            if producer.is_alive():
                producer.join(PRODUCER_JOIN_S)

    def shut_down(self, note: Callable[[str], None]) -> None:
        """Stop everything, however the run ended (a no-op for what already stopped)."""
        if self.injector.network is not None:
            self.injector.network.heal()  # before anything slow: no rule outlives the run
        if self.injector.proxies is not None:
            with contextlib.suppress(Exception):  # the toxics: the same, on the proxies
                self.injector.proxies.clear()
        self.operation.stop()  # an aborted run: its command is not left moving replicas
        # an aborted run's load stops before the log it writes to is closed (its threads raised "I/O
        # operation on closed file" otherwise)
        self.stop_producers()
        self._watching.set()
        if self._watcher.is_alive():
            self._watcher.join(10)
        self.health.stop()
        if self.health.is_alive():
            self.health.join(30)
        self.members.close_all()
        self.restarts.wait(RESTART_TIMEOUT_S, note)
        for broker in self.cluster.broker_ids:
            self.cluster.start_broker(broker, timeout_s=RESTART_TIMEOUT_S)


def open_rig(
    cluster: Any,
    workdir: Path,
    *,
    topic: str,
    prefix: str,
    partitions: int,
    session_timeout_ms: int,
    rate: float,
    faults: tuple[PlannedFault, ...],
    drained_broker: int,
    note: Callable[[str], None],
    cleanup: ExitStack,
    groups: Groups = GROUPS,
    producers: tuple[ProducerSpec, ...] = PRODUCERS,
    migration_ready: tuple[str, ...] = (),
) -> Rig:
    """Open what the run needs (module docstring); ``cleanup`` closes the log, the admin client and the
    client log handlers after :meth:`Rig.shut_down` (the caller's ``finally``), which still logs. Java
    members' jars are built first (:class:`~kafka_placement.soak.java_member.JavaMemberUnavailable`
    when they cannot be)."""
    from kafka_placement.clients.connection import connection_settings
    from kafka_placement.clients.kafka_python.admin import open_admin
    from kafka_placement.soak.java_member import JAVA_CLIENTS, class_path
    from kafka_placement.testing.topics import create_topic

    runner_log = cleanup.enter_context(open(workdir / "runner.jsonl", "w", buffering=1))  # noqa: SIM115
    aiokafka = ("aiokafka",) if any(spec.client == "aiokafka" for spec in producers) else ()
    cleanup.enter_context(kafka_python_log(workdir, also=aiokafka))
    lock = threading.Lock()

    def write(event: Event) -> None:
        with lock:
            runner_log.write(dump_event(event) + "\n")

    java_cp = class_path() if any(c in JAVA_CLIENTS for m in groups.values() for _n, c, _s, _p in m) else None
    kp = cluster.kafka_python_settings()

    def admin() -> Any:
        return open_admin(kp, request_timeout_ms=15000)  # a silent broker must not hold the checks

    adm = admin()
    cleanup.callback(adm.close)
    create_topic(adm, topic, partitions, 3, config={"min.insync.replicas": str(MIN_ISR)}, fresh_admin=admin)
    properties = cluster.write_client_config(workdir / "client.properties")
    # each member kind's settings (``client`` of the groups' table), the producers' by their client
    connection: dict[str, dict[str, Any]] = {
        "kafka-python": kp,
        "confluent": cluster.librdkafka_settings(),
        "confluent-consumer": cluster.librdkafka_settings(),
        "java-consumer": cluster.client_settings(),
        "java-classic": cluster.client_settings(),
    }
    if any(spec.client == "aiokafka" for spec in producers):  # its TLS is an ssl.SSLContext, made here
        settings = connection_settings(cluster.bootstrap_servers, command_config=str(properties))
        connection["aiokafka"] = settings.aiokafka()
    members = Members(
        workdir, topic, connection, session_timeout_ms, prefix, write, groups, java_cp, migration_ready
    )
    librdkafka = cleanup.enter_context(client_log(workdir))
    threads = [
        ProducerThread(spec, topic, partitions, rate, connection[spec.client], write, librdkafka)
        for spec in producers
    ]
    restarts = Restarts(cluster, write)
    operation = ThrottledReassignment(
        workdir, cluster.bootstrap_servers, properties, topic, drained_broker, note=note
    )
    network, unavailable = _network(any(f.kind == "broker-partition" for f in faults))
    proxies = _proxies(cluster) if any(f.kind in NETWORK_KINDS for f in faults) else None
    injector = FaultInjector(
        cluster,
        members,
        adm,
        topic,
        write,
        restarts,
        network=network,
        network_unavailable=unavailable,
        proxies=proxies,
        groups=tuple(members.group_id(g) for g in groups),
        prefix=prefix,
    )
    watching = threading.Event()
    watcher = threading.Thread(target=members.watch_until, args=(watching,), name="soak-watch", daemon=True)
    return Rig(
        cluster,
        write,
        kp,
        adm,
        members,
        threads,
        restarts,
        injector,
        operation,
        HealthSampler(admin, topic, MIN_ISR, write, groups=[members.group_id(g) for g in groups]),
        watching,
        watcher,
    )


def _proxies(cluster: Any) -> Any:
    """The cluster's Toxiproxy handle, its toxics cleared (a fault left by an aborted run's block is
    removed by the block's own ``finally``; this makes sure); None on a cluster without proxies: each
    network fault is then logged skipped."""
    from kafka_placement.errors import ClusterError

    try:
        proxies = cluster.faults
    except ClusterError:
        return None
    proxies.clear()
    return proxies


def _network(planned: bool) -> tuple[NetworkPartitions | None, str | None]:
    """For a schedule with partitions: the iptables adapter when it works here (stale rules of dead
    runs swept), else the reason, recorded (each partition is then skipped)."""
    if not planned:
        return None, None
    network = NetworkPartitions()
    unavailable = network.unavailable()
    if unavailable is not None:
        return None, unavailable
    network.sweep_stale()
    return network, None


@contextmanager
def client_log(workdir: Path) -> Iterator[logging.Logger]:
    """Where the producers' librdkafka log lines go: ``librdkafka.log`` beside the other logs. Every
    injected fault makes librdkafka log a disconnect or a refused connect; on the terminal they buried
    the soak's own progress lines. The logger is not registered with ``logging`` (no parent, nothing
    left behind in the process once the run ends)."""
    log = logging.Logger(f"kafka_placement.soak.librdkafka.{workdir.name}", logging.DEBUG)
    handler = logging.FileHandler(workdir / "librdkafka.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(handler)
    try:
        yield log
    finally:
        log.removeHandler(handler)
        handler.close()


@contextmanager
def kafka_python_log(workdir: Path, also: tuple[str, ...] = ()) -> Iterator[None]:
    """kafka-python's own log (its producers' sender, the runner's admin client), INFO and up, into
    ``kafka-python.log`` for the run, and off the terminal meanwhile. A 30-minute run had both
    kafka-python producers stop for good, and nothing was left to say why. The loggers named in ``also``
    go there too: ``aiokafka`` when the full profile's aiokafka producers run (its sender's "Got error
    produce response" for every connection a network fault closed buried the progress lines); only
    then, so a quick run leaves no logger of a client it did not use."""
    logs = [logging.getLogger(name) for name in ("kafka", *also)]
    handler = logging.FileHandler(workdir / "kafka-python.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s"))
    saved = [(log.level, log.propagate) for log in logs]
    for log in logs:
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    try:
        yield
    finally:
        for log, (level, propagate) in zip(logs, saved, strict=True):
            log.removeHandler(handler)
            log.setLevel(level)
            log.propagate = propagate
        handler.close()


def sleep_until(deadline: float) -> None:
    """Sleep until ``time.monotonic()`` reaches ``deadline`` (in steps: a Ctrl-C is not held up)."""
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(left, 0.5))
