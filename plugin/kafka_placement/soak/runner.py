"""One soak run against a live :class:`~kafka_placement.testing.KafkaCluster`, as a pipeline of stages,
each a function with typed inputs and outputs:

schedule (:func:`~kafka_placement.soak.run_plan.plan_run`, pure) → cluster
(:func:`~kafka_placement.soak.rig.open_rig`) → load (:func:`start_load`) → faults (:func:`inject_faults`)
→ drain (:func:`stop_and_drain`) → read back (:func:`read_back`) → judge (:func:`judge_run`, over the
logs: :func:`~kafka_placement.soak.verdict.judge`).

Groups: ``fo-kp`` (kafka-python members, our failover assignor), ``fo-cf`` (our confluent ``Consumer``
members, the same assignor), ``coop`` (confluent, cooperative-sticky; its members leave and join through
the member faults); the full profile adds ``fo-cp`` and ``fo-java`` (:mod:`~kafka_placement.soak.members`),
aiokafka producers, and network faults through a proxied cluster (:mod:`~kafka_placement.soak.proxyfault`).
Every member writes its own JSON-lines log; the runner's log holds the acks, the
faults and when each member process ran. The logs are read as they grow
(:class:`~kafka_placement.soak.logtail.LogTail`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kafka_placement.soak.drain import DrainOutcome, drain, wait_owned
from kafka_placement.soak.health import coordinator_partition
from kafka_placement.soak.logtail import LogTail, read_logs
from kafka_placement.soak.members import GROUPS, failover_groups
from kafka_placement.soak.migration import MigrationStep, StepDone, judge_migration, timeline
from kafka_placement.soak.operation import APPLY_TIMEOUT_S, START_FRACTION
from kafka_placement.soak.readback import read_topic
from kafka_placement.soak.restarts import RESTART_TIMEOUT_S
from kafka_placement.soak.rig import Rig, open_rig, sleep_until
from kafka_placement.soak.run_plan import PROFILES, Profile, RunPlan, plan_run
from kafka_placement.soak.schedule import MEMBER_KINDS, NETWORK_KINDS
from kafka_placement.soak.stacks import dump_stacks
from kafka_placement.soak.verdict import SoakLogs, Windows, judge

__all__ = ["GROUPS", "PROFILES", "Profile", "RunPlan", "plan_run", "read_logs", "run_soak"]


#: a bound on reading the whole topic back after the run (30 minutes of load: ~450,000 records)
READBACK_S = 300.0
#: how long the groups may take to own every partition before the load starts
OWNED_S = 180.0


class RunClock:
    """The run's progress reports: the share of the load done (0 before it starts) and a note."""

    def __init__(self, duration_s: float, report: Callable[[float, str], None]) -> None:
        self.duration_s, self._report = duration_s, report
        self.started: float | None = None  # time.monotonic() when the load started

    def start(self) -> float:
        self.started = time.monotonic()
        return self.started

    def note(self, text: str) -> None:
        share = 0.0 if self.started is None else (time.monotonic() - self.started) / self.duration_s
        self._report(share, text)

    def after_load(self, text: str) -> None:
        self._report(1.0, text)


# ---------------------------------------------------------------- load
@dataclass(frozen=True)
class LoadStart:
    monotonic: float  # time.monotonic(): the faults are scheduled from it
    wall: float  # time.time(): the logs' clock


def start_load(rig: Rig, plan: RunPlan, tail: LogTail, clock: RunClock) -> LoadStart:
    """Members first (until every group owns every partition), then the health sampler, the producers and
    the reassignment (at :data:`~kafka_placement.soak.operation.START_FRACTION` of the load)."""
    rig.start_members()
    group_of = {name: spec[0] for name, spec in rig.members.specs.items()}
    wait_owned(tail, group_of, plan.profile.partitions, OWNED_S)
    rig.health.start()
    for producer in rig.producers:
        producer.start()
    start = LoadStart(clock.start(), time.time())
    rig.operation.start(START_FRACTION * plan.duration_s)
    return start


# ---------------------------------------------------------------- faults
@dataclass(frozen=True)
class FaultsDone:
    skipped: int
    #: the rolling migration's steps as they ran (:mod:`~kafka_placement.soak.migration`)
    migrated: tuple[StepDone, ...] = ()


def inject_faults(rig: Rig, plan: RunPlan, start: LoadStart, clock: RunClock) -> FaultsDone:
    """Apply the schedule, one fault at a time, and the migration's steps between them. The load lasts
    ``duration_s`` whatever a restart takes: a fault waits for a broker still starting, and is skipped
    when it would then outlast the load — except a kill or pause of an active failover member
    (``plan.must_hit``), which touches no broker and does not wait: a slow restart must not cost a run its
    failover. A migration step never waits for a broker either (operators do not)."""
    skipped = 0
    migrated: list[StepDone] = []
    for at_s, item in timeline(plan.faults, plan.profile.migration, plan.duration_s):
        sleep_until(start.monotonic + at_s)
        if isinstance(item, MigrationStep):
            migrated.append(_migrate(rig, item, clock))
            continue
        fault = item
        latest = start.monotonic + plan.duration_s - fault.hold_s
        independent = fault.kind in MEMBER_KINDS and fault.target in plan.must_hit
        if not independent:
            rig.restarts.wait(latest - time.monotonic(), clock.note)
        if (rig.restarts.pending() and not independent) or time.monotonic() > latest:
            skipped += 1
            continue
        clock.note(f"{fault.kind} {fault.target}")
        skipped += 0 if rig.injector.apply(fault) else 1
    sleep_until(start.monotonic + plan.duration_s)
    return FaultsDone(skipped, tuple(migrated))


def _migrate(rig: Rig, step: MigrationStep, clock: RunClock) -> StepDone:
    from_client = rig.members.specs[step.member][1]
    clock.note(f"migrating {step.member} to {step.to_client}")
    t = time.time()
    close_s = rig.members.switch(step.member, step.to_client)
    return StepDone(step.member, from_client, step.to_client, t, round(close_s, 3))


# ---------------------------------------------------------------- drain
def stop_and_drain(rig: Rig, plan: RunPlan, tail: LogTail, clock: RunClock) -> tuple[float, DrainOutcome]:
    """Stop the producers (the load's end, wall time), wait for every broker and the reassignment, then
    drain (:func:`~kafka_placement.soak.drain.drain`): a slow restart cannot use up the drain's time."""
    load_end = time.time()
    clock.after_load("load done")
    rig.stop_producers()
    rig.restarts.wait(RESTART_TIMEOUT_S, clock.after_load)
    rig.operation.join(APPLY_TIMEOUT_S + 300.0)  # bounded by its own commands' timeouts
    prefix = rig.members.prefix + "-"
    outcome = drain(
        tail,
        [rig.members.group_id(g) for g in rig.members.groups],
        bound_s=plan.profile.drain_s,
        stall_s=plan.profile.drain_stall_s,
        note=clock.after_load,
        short=lambda group: group.removeprefix(prefix),
    )
    if outcome.ended != "consumed":  # taken now: the stuck members are closed next
        left = {g for g, n in outcome.unconsumed.items() if n}
        names = [n for n, spec in rig.members.specs.items() if rig.members.group_id(spec[0]) in left]
        clock.after_load(f"taking the stacks of {', '.join(names)}")
        dumps = dump_stacks(rig.members.procs, names, rig.members.workdir)
        outcome = replace(outcome, stacks=tuple(d.summary() for d in dumps))
    return load_end, outcome


# ---------------------------------------------------------------- read back
@dataclass(frozen=True)
class ReadBack:
    """The topic read back after the drain (the reassignment's copies checked first)."""

    found: dict[Any, tuple[int, int]]  # (producer, sequence) → (partition, offset)
    high_watermarks: dict[int, int]
    complete: bool
    error: str | None = None
    diagnosis: dict[str, Any] | None = field(default=None)


def read_back(rig: Rig, plan: RunPlan, drained: DrainOutcome, tail: LogTail, clock: RunClock) -> ReadBack:
    """Check the reassignment's copies, read every record of the topic, and — when a group left records
    unconsumed — say where they are (:mod:`~kafka_placement.soak.diagnosis`: an explanation only)."""
    clock.after_load("reading the topic back")
    rig.operation.check_copies(rig.adm)
    try:
        found, high_watermarks, complete = read_topic(
            rig.kafka_python, plan.topic, plan.profile.partitions, READBACK_S
        )
        error = None
    except Exception as exc:  # kafka-python's errors: judged (an incomplete read), not a crash
        found, high_watermarks, complete, error = {}, {}, False, f"{type(exc).__name__}: {exc}"
    diagnosis = None
    if any(drained.unconsumed.values()):
        if error is not None:
            diagnosis = {"error": error}
        else:
            try:
                tail.poll()
                diagnosis = _diagnose(rig, plan, tail.logs, found, high_watermarks, complete)
            except Exception as exc:  # kafka-python's errors and a cluster still recovering
                diagnosis = {"error": f"{type(exc).__name__}: {exc}"}
    return ReadBack(found, high_watermarks, complete, error, diagnosis)


def _diagnose(
    rig: Rig,
    plan: RunPlan,
    logs: SoakLogs,
    in_topic: dict[Any, tuple[int, int]],
    high_watermarks: dict[int, int],
    complete: bool,
) -> dict[str, Any]:
    """Where the unconsumed records are (:func:`~kafka_placement.soak.diagnosis.unconsumed_report`)."""
    from kafka_placement.soak.diagnosis import unconsumed_report
    from kafka_placement.soak.readback import committed_offsets

    groups = [rig.members.group_id(g) for g in rig.members.groups]
    report = unconsumed_report(
        logs.acks,
        logs.consumed,
        groups,
        in_topic,
        committed_offsets(rig.adm, plan.topic, groups),
        high_watermarks,
    )
    return {"topic_read_complete": complete, "records_in_topic": len(in_topic), "groups": report}


# ---------------------------------------------------------------- the run
def run_soak(
    cluster: Any,
    *,
    minutes: float,
    seed: int,
    profile_name: str,
    workdir: Path,
    progress: Callable[[float, str], None] | None = None,
) -> tuple[dict[str, Any], SoakLogs]:
    """Run the soak for ``minutes`` of load; the summary (see :func:`judge`) and the logs it judged."""
    plan = plan_run(seed, minutes, profile_name, list(cluster.broker_ids))
    workdir.mkdir(parents=True, exist_ok=True)
    clock = RunClock(plan.duration_s, progress or (lambda _share, _note: None))
    tail = LogTail(workdir)
    load: tuple[float, float] | None = None
    migration: dict[str, Any] | None = None
    faults, drained, readback = FaultsDone(0), None, None
    # what is opened before the run is closed however it ends (a refused topic, a cluster that fails),
    # and after the rig's own shut-down (the finally), which still logs through it
    with ExitStack() as cleanup:
        rig = open_rig(
            cluster,
            workdir,
            topic=plan.topic,
            prefix=plan.prefix,
            partitions=plan.profile.partitions,
            session_timeout_ms=plan.profile.session_timeout_ms,
            rate=plan.profile.rate_per_producer,
            faults=plan.faults,
            drained_broker=plan.drained_broker,
            note=clock.note,
            cleanup=cleanup,
            groups=plan.profile.groups,
            producers=plan.profile.producers,
            migration_ready=tuple(step.member for step in plan.profile.migration),
        )
        try:
            start = start_load(rig, plan, tail, clock)
            faults = inject_faults(rig, plan, start, clock)
            load_end, drained = stop_and_drain(rig, plan, tail, clock)
            load = (start.wall, load_end)
            readback = read_back(rig, plan, drained, tail, clock)
            migration = _migration_outcome(rig, plan, faults) if plan.profile.migration else None
        finally:
            rig.shut_down(clock.after_load)
    logs = tail.judged()
    summary = judge_run(plan, rig, logs, load, faults.skipped, drained, readback)
    if migration is not None:
        summary["migration"] = migration
        if not migration["held"]:
            summary["verdict"] = "violated"
    return summary, logs


def _migration_outcome(rig: Rig, plan: RunPlan, faults: FaultsDone) -> dict[str, Any]:
    """The migration judged after the drain: the steps, and the group as the broker describes it."""
    from kafka_placement.clients.connection import connection_settings
    from kafka_placement.clients.group_reading import read_group
    from kafka_placement.groups.migration import migration_status
    from kafka_placement.soak.migration import MIGRATING_GROUP

    settings = connection_settings(rig.operation.bootstrap, command_config=str(rig.operation.command_config))
    final: dict[str, Any] | None = None
    error = None
    for attempt in range(3):  # the drain ends once every record is read, not once every broker is calm
        try:
            group = read_group(settings, rig.members.group_id(MIGRATING_GROUP))
            final = migration_status(group, failover=True).summary()
            break
        except Exception as exc:  # judged (the group could not be described), not a crash of the soak
            error = f"{type(exc).__name__}: {exc}"
            time.sleep(5.0 * (attempt + 1))
    rig.members.watch()
    return judge_migration(plan.profile.migration, faults.migrated, rig.members.exits, final, error)


# ---------------------------------------------------------------- judge
def _sessions(plan: RunPlan, group_ids: list[str]) -> dict[str, float]:
    """Each group's session timeout (s): the profile's, which the test cluster also gives the consumer
    protocol's groups (``group.consumer.session.timeout.ms``, ``testing/failover_plugin.py``)."""
    return dict.fromkeys(group_ids, plan.profile.session_timeout_ms / 1000)


def judge_run(
    plan: RunPlan,
    rig: Rig,
    logs: SoakLogs,
    load: tuple[float, float] | None,
    skipped: int,
    drained: DrainOutcome | None,
    readback: ReadBack | None,
) -> dict[str, Any]:
    """The verdict over the logs (:func:`~kafka_placement.soak.verdict.judge`) and the run's own figures."""
    members = rig.members
    priorities = {
        members.group_id(g): {name: prio for name, _c, _s, prio in members.groups[g]}
        for g in failover_groups(members.groups)
    }
    windows = Windows(standby_s=plan.profile.session_timeout_ms / 1000 + 25.0, overlap_s=5.0)
    offsets_partitions = rig.health.offsets_partitions
    coordinators = (
        {
            members.group_id(g): coordinator_partition(members.group_id(g), offsets_partitions)
            for g in members.groups
        }
        if offsets_partitions
        else {}
    )
    reassignment = None
    if load is not None:
        error = {} if readback is None or readback.error is None else {"readback_error": readback.error}
        reassignment = {**rig.operation.outcome, **error}
    groups = [members.group_id(g) for g in members.groups]
    summary = judge(
        logs,
        groups,
        priorities,
        windows,
        until=time.time(),
        load=load,
        reassignment=reassignment,
        readback=None if readback is None else (readback.found, readback.complete),
        coordinators=coordinators,
        session_s=_sessions(plan, groups),
        high_watermarks=None if readback is None or not readback.complete else readback.high_watermarks,
    )
    drain_entry: dict[str, Any] = {} if drained is None else drained.summary()
    if readback is not None and readback.diagnosis is not None:
        drain_entry["diagnosis"] = readback.diagnosis
    injector = rig.injector
    summary.update(
        {
            "seed": plan.seed,
            "profile": plan.profile_name,
            "minutes": plan.minutes,
            "topic": plan.topic,
            "producers": {
                p.spec.name: {
                    "sent": p.sent,
                    "acked": p.acked,
                    "failed": p.failed,
                    "failed_by": dict(p.failed_by.most_common()),
                    "unresolved_at_stop": p.unresolved_at_stop,
                }
                for p in rig.producers
            },
            "planned_faults": len(plan.faults),
            "skipped_faults": skipped,
            "drain": drain_entry,
            "network": {
                "planned": sum(f.kind == "broker-partition" for f in plan.faults),
                "proxied": sum(f.kind in NETWORK_KINDS for f in plan.faults),
                "unavailable": injector.network_unavailable,
                "isolation": injector.isolations,
            },
            "member_exits": [
                {"member": name, "t": round(t, 3), "code": code} for name, t, code in members.exits
            ],
            "member_respawns": [{"member": name, "t": round(t, 3)} for name, t in members.respawns],
            "health_samples": {"taken": rig.health.samples, "failed": rig.health.failures},
        }
    )
    return summary
