"""One soak run against a live :class:`~kafka_placement.testing.KafkaCluster`: a topic (RF 3,
``min.insync.replicas=2``), the groups' member processes, the producers, the seeded faults, a drain, and
the verdict (:func:`~kafka_placement.soak.verdict.judge`) over every log.

Groups: ``fo-kp`` (kafka-python members, our failover assignor), ``fo-cf`` (our confluent ``Consumer``
members, the same assignor), ``coop`` (confluent, cooperative-sticky; its members leave and join through
the member faults). Every member writes its own JSON-lines log; the runner's log holds the acks, the
faults and when each member process ran.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_placement.errors import ClusterError
from kafka_placement.soak.events import Event, dump_event, parse_event
from kafka_placement.soak.faults import FaultInjector
from kafka_placement.soak.health import HealthSampler, coordinator_partition
from kafka_placement.soak.load import PRODUCERS, ProducerThread
from kafka_placement.soak.members import FAILOVER_GROUPS, GROUPS, Members
from kafka_placement.soak.netfault import NetworkPartitions
from kafka_placement.soak.operation import APPLY_TIMEOUT_S, START_FRACTION, ThrottledReassignment
from kafka_placement.soak.readback import read_topic
from kafka_placement.soak.restarts import RESTART_TIMEOUT_S, Restarts
from kafka_placement.soak.schedule import FULL_KINDS, QUICK_KINDS, fault_schedule
from kafka_placement.soak.verdict import SoakLogs, Windows, judge

__all__ = ["GROUPS", "PROFILES", "Profile", "run_soak"]


@dataclass(frozen=True)
class Profile:
    rate_per_producer: float  # records per second
    partitions: int
    session_timeout_ms: int
    fault_interval_s: float
    #: the drain (after the load, once every broker is back) ends when each group consumed every
    #: acknowledged record, when no group consumed anything new for ``drain_stall_s``, or at ``drain_s``.
    #: Held runs here (load average 100-170) showed partitions unread for up to 69 s and records
    #: consumed up to 108 s after their ack following a broker pause or kill: the bounds are well past that
    drain_s: float
    drain_stall_s: float
    #: what the seeded schedule draws from (the quick one's list is the one it always drew from)
    fault_kinds: tuple[str, ...] = QUICK_KINDS


PROFILES = {
    "quick": Profile(rate_per_producer=20.0, partitions=12, session_timeout_ms=6000, fault_interval_s=10.0,
                     drain_s=420.0, drain_stall_s=150.0),
    "full": Profile(rate_per_producer=50.0, partitions=24, session_timeout_ms=6000, fault_interval_s=25.0,
                    drain_s=900.0, drain_stall_s=150.0, fault_kinds=FULL_KINDS),
}

#: how long the run waits for each producer thread to flush and end after stop()
PRODUCER_JOIN_S = 180.0
#: a bound on reading the whole topic back after the run (30 minutes of load: ~450,000 records)
READBACK_S = 300.0
#: The soak topic's min.insync.replicas (RF 3): a write survives one broker's loss.
MIN_ISR = 2


def read_logs(workdir: Path) -> SoakLogs:
    logs = SoakLogs()
    for path in sorted(workdir.glob("*.jsonl")):
        with open(path) as f:
            lines = f.read().splitlines()
        # the last line of a killed member may be cut short: skip a torn final line
        logs.add(parse_event(line) for line in (lines if path.name == "runner.jsonl" else _whole(lines)))
    # an ownership line is written at acquisition and again at release: keep the latest of each
    latest: dict[tuple[str, int, float], Any] = {}
    for own in logs.ownerships:
        key = (own.member, own.generation, own.acquired)
        if key not in latest or own.released is not None:
            latest[key] = own
    logs.ownerships = list(latest.values())
    return logs


def _whole(lines: list[str]) -> list[str]:
    return lines if not lines or lines[-1].endswith("}") else lines[:-1]


@contextmanager
def _client_log(workdir: Path) -> Iterator[logging.Logger]:
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
def _kafka_python_log(workdir: Path) -> Iterator[None]:
    """kafka-python's own log (its producers' sender, the runner's admin client), INFO and up, into
    ``kafka-python.log`` for the run, and off the terminal meanwhile. A 30-minute run had both
    kafka-python producers stop for good, and nothing was left to say why."""
    log = logging.getLogger("kafka")
    handler = logging.FileHandler(workdir / "kafka-python.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s"))
    saved = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(saved[0])
        log.propagate = saved[1]
        handler.close()


def run_soak(cluster: Any, *, minutes: float, seed: int, profile_name: str, workdir: Path,
             progress: Callable[[float, str], None] | None = None) -> tuple[dict[str, Any], SoakLogs]:
    """Run the soak for ``minutes`` of load; the summary (see :func:`judge`) and the logs it judged."""
    from kafka.admin import KafkaAdminClient

    from kafka_placement.testing.topics import create_topic

    profile = PROFILES[profile_name]
    workdir.mkdir(parents=True, exist_ok=True)
    prefix = f"kp-soak-{uuid.uuid4().hex[:6]}"
    topic = f"{prefix}-records"
    # what is opened before the run is closed however it ends (a refused topic, a bad schedule), and
    # after the run's own cleanup (the inner finally), which still logs through it
    with ExitStack() as cleanup:
        runner_log = cleanup.enter_context(open(workdir / "runner.jsonl", "w", buffering=1))
        cleanup.enter_context(_kafka_python_log(workdir))
        lock = threading.Lock()

        def write(event: Event) -> None:
            with lock:
                runner_log.write(dump_event(event) + "\n")

        kp = cluster.kafka_python_settings()
        connection = {"kafka-python": kp, "confluent": cluster.librdkafka_settings()}

        def admin() -> Any:
            return KafkaAdminClient(**kp, request_timeout_ms=15000)

        adm = admin()
        cleanup.callback(adm.close)
        create_topic(adm, topic, profile.partitions, 3, config={"min.insync.replicas": str(MIN_ISR)},
                     fresh_admin=admin)
        members = Members(workdir, topic, connection, profile.session_timeout_ms, prefix, write)
        client_log = cleanup.enter_context(_client_log(workdir))
        producers = [ProducerThread(spec, topic, profile.partitions, profile.rate_per_producer,
                                    connection[spec.client], write, client_log) for spec in PRODUCERS]
        duration = minutes * 60.0
        plan = fault_schedule(seed, duration, brokers=cluster.broker_ids, partitions=profile.partitions,
                              members=list(members.specs), interval_s=profile.fault_interval_s,
                              member_pause_s=profile.session_timeout_ms / 1000 + 4.0,
                              kinds=profile.fault_kinds)
        report = progress or (lambda _f, _n: None)
        restarts = Restarts(cluster, write)
        # the operation in flight: one broker (by the seed) drained of the topic while the faults go on
        operation = ThrottledReassignment(
            workdir, cluster.bootstrap_servers, cluster.write_client_config(workdir / "client.properties"),
            topic, cluster.broker_ids[seed % len(cluster.broker_ids)],
            note=lambda text: report(1.0 if not load_start else (time.time() - load_start) / duration, text))
        injector = FaultInjector(cluster, members, adm, topic, write, restarts)
        if any(f.kind == "broker-partition" for f in plan):
            _check_network(injector)
        skipped = 0
        load_start = load_end = 0.0
        drain: dict[str, Any] = {}
        readback: tuple[dict[Any, tuple[int, int]], bool] | None = None
        watching = threading.Event()
        health = HealthSampler(admin, topic, MIN_ISR, write)
        watcher = threading.Thread(target=members.watch_until, args=(watching,), name="soak-watch",
                                   daemon=True)
        try:
            for name in members.specs:
                members.spawn(name)
            watcher.start()
            _wait_owned(workdir, members, profile.partitions, 180.0)
            health.start()
            for producer in producers:
                producer.start()
            started, load_start = time.monotonic(), time.time()
            operation.start(START_FRACTION * duration)
            for fault in plan:
                _sleep_until(started + fault.at_s)
                # one fault at a time, and the load lasts `duration` whatever a restart takes: a fault
                # waits for a broker still starting, and is skipped when it would then outlast the load
                latest = started + duration - fault.hold_s
                restarts.wait(latest - time.monotonic(), lambda note: report(
                    (time.monotonic() - started) / duration, note))
                if restarts.pending() or time.monotonic() > latest:
                    skipped += 1
                    continue
                report((time.monotonic() - started) / duration, f"{fault.kind} {fault.target}")
                skipped += 0 if injector.apply(fault) else 1
            _sleep_until(started + duration)
            load_end = time.time()
            report(1.0, "load done")
            for producer in producers:
                producer.stop()
            for producer in producers:
                producer.join(PRODUCER_JOIN_S)
            # the drain starts with every broker back, so a slow restart cannot use up its time
            restarts.wait(RESTART_TIMEOUT_S, lambda note: report(1.0, note))
            operation.join(APPLY_TIMEOUT_S + 300.0)  # bounded by its own commands' timeouts
            drain = _drain(workdir, members, profile, lambda note: report(1.0, note))
            report(1.0, "reading the topic back")
            operation.check_copies(adm)
            try:
                in_topic, high_watermarks, complete = read_topic(kp, topic, profile.partitions, READBACK_S)
            except Exception as exc:  # kafka-python's errors: judged (an incomplete read), not a crash
                in_topic, high_watermarks, complete = {}, {}, False
                operation.outcome["readback_error"] = f"{type(exc).__name__}: {exc}"
            readback = (in_topic, complete)
            if any(drain["unconsumed"].values()) and "readback_error" in operation.outcome:
                drain["diagnosis"] = {"error": operation.outcome["readback_error"]}
            elif any(drain["unconsumed"].values()):
                try:  # an explanation only: the verdict stands without it
                    drain["diagnosis"] = _diagnose(workdir, adm, topic, [members.group_id(g) for g in GROUPS],
                                                   in_topic, high_watermarks, complete)
                except Exception as exc:  # kafka-python's errors and a cluster still recovering
                    drain["diagnosis"] = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            if injector.network is not None:
                injector.network.heal()  # before anything slow: no rule outlives the run
            operation.stop()  # an aborted run: its command is not left moving replicas
            # a run aborted by an error: the load stops before the log it writes to is closed (their
            # threads raised "I/O operation on closed file" otherwise); a no-op after a whole run
            for producer in producers:
                producer.stop()
            for producer in producers:
                if producer.is_alive():
                    producer.join(PRODUCER_JOIN_S)
            watching.set()
            if watcher.is_alive():
                watcher.join(10)
            health.stop()
            if health.is_alive():
                health.join(30)
            members.close_all()
            restarts.wait(RESTART_TIMEOUT_S, lambda note: report(1.0, note))
            for broker in cluster.broker_ids:
                cluster.start_broker(broker, timeout_s=RESTART_TIMEOUT_S)
    logs = read_logs(workdir)
    priorities = {members.group_id(g): {name: prio for name, _c, _s, prio in GROUPS[g]}
                  for g in FAILOVER_GROUPS}
    windows = Windows(standby_s=profile.session_timeout_ms / 1000 + 25.0, overlap_s=5.0)
    offsets_partitions = health.offsets_partitions
    coordinators = ({members.group_id(g): coordinator_partition(members.group_id(g), offsets_partitions)
                     for g in GROUPS} if offsets_partitions else {})
    summary = judge(logs, [members.group_id(g) for g in GROUPS], priorities, windows, until=time.time(),
                    load=(load_start, load_end) if load_end else None,
                    reassignment=operation.outcome if load_end else None, readback=readback,
                    coordinators=coordinators)
    summary.update({
        "seed": seed, "profile": profile_name, "minutes": minutes, "topic": topic,
        "producers": {p.spec.name: {"sent": p.sent, "acked": p.acked, "failed": p.failed,
                                    "unresolved_at_stop": p.unresolved_at_stop} for p in producers},
        "planned_faults": len(plan), "skipped_faults": skipped, "drain": drain,
        "network": {"planned": sum(f.kind == "broker-partition" for f in plan),
                    "unavailable": injector.network_unavailable, "isolation": injector.isolations},
        "member_exits": [{"member": name, "t": round(t, 3), "code": code} for name, t, code in members.exits],
        "health_samples": {"taken": health.samples, "failed": health.failures},
    })
    return summary, logs


def _check_network(injector: FaultInjector) -> None:
    """For a schedule with partitions: the iptables adapter when it works here (stale rules of dead
    runs swept), else the reason, recorded (each partition is then skipped)."""
    network = NetworkPartitions()
    injector.network_unavailable = network.unavailable()
    if injector.network_unavailable is None:
        network.sweep_stale()
        injector.network = network


def _sleep_until(deadline: float) -> None:
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(left, 0.5))


def _wait_owned(workdir: Path, members: Members, partitions: int, timeout_s: float) -> None:
    """Until every group's open holdings cover all partitions."""
    deadline = time.monotonic() + timeout_s
    while True:
        logs = read_logs(workdir)
        covered: dict[str, set[int]] = {g: set() for g in GROUPS}
        for own in logs.ownerships:
            if own.released is None:
                covered[members.specs[own.member][0]].update(own.partitions)
        if all(len(parts) == partitions for parts in covered.values()):
            return
        if time.monotonic() > deadline:
            counts = {g: len(p) for g, p in covered.items()}
            raise ClusterError(
                f"soak groups did not own all {partitions} partitions within {timeout_s:.0f}s: {counts}"
            )
        time.sleep(1.0)


def _drain(workdir: Path, members: Members, profile: Profile, note: Callable[[str], None]) -> dict[str, Any]:
    """Until each group consumed every acknowledged record, or no group consumed one more of them for
    ``profile.drain_stall_s``, or ``profile.drain_s`` passed (the verdict then says what is lost). The
    seconds it took, why it ended and what each group had not consumed."""
    started = time.monotonic()
    last_progress, last_count = started, -1
    while True:
        logs = read_logs(workdir)
        acked = {a.record for a in logs.acks}
        seen: dict[str, set[tuple[str, int]]] = {members.group_id(g): set() for g in GROUPS}
        for record in logs.consumed:
            seen.setdefault(record.group, set()).add(record.record)
        unconsumed = {group: len(acked - got) for group, got in seen.items()}
        now = time.monotonic()
        count = sum(len(acked & got) for got in seen.values())
        if count > last_count:
            last_progress, last_count = now, count
        ended = ("consumed" if not any(unconsumed.values())
                 else "stalled" if now - last_progress > profile.drain_stall_s
                 else "bound" if now - started > profile.drain_s else None)
        if ended is not None:
            return {"seconds": round(now - started, 1), "ended": ended, "unconsumed": unconsumed}
        note("draining: " + ", ".join(f"{g.removeprefix(members.prefix + '-')} {n}"
                                      for g, n in unconsumed.items() if n) + " to consume")
        time.sleep(2.0)


def _diagnose(workdir: Path, adm: Any, topic: str, groups: list[str], in_topic: dict[Any, tuple[int, int]],
              high_watermarks: dict[int, int], complete: bool) -> dict[str, Any]:
    """Where the unconsumed records are (:func:`~kafka_placement.soak.diagnosis.unconsumed_report`)."""
    from kafka_placement.soak.diagnosis import unconsumed_report
    from kafka_placement.soak.readback import committed_offsets

    logs = read_logs(workdir)
    report = unconsumed_report(logs.acks, logs.consumed, groups, in_topic,
                               committed_offsets(adm, topic, groups), high_watermarks)
    return {"topic_read_complete": complete, "records_in_topic": len(in_topic), "groups": report}
