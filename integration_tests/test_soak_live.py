"""The soak's quick profile end to end on the session cluster (6 brokers on 3 racks): 3 minutes of load
through our partitioners into three groups (kafka-python failover, confluent failover, confluent
cooperative-sticky) while seed 1's faults hit brokers and members; every invariant must hold.

Bounds, stated (a loaded 2-core machine): the load lasts 3 minutes whatever a restart takes (a fault whose
turn comes while a broker is still starting is skipped); the drain starts once every broker is back and
ends when every group consumed every acknowledged record (or after 150 s without progress, or 420 s);
standby consumption is allowed for session timeout + 25 s after a membership change or broker fault,
and a resumed (SIGSTOPped) member may overlap its successor for 5 s while it learns it was replaced.
Expected values: the records the producers' own acknowledgements name, the schedule from an independent
call of the seeded planner (each failover group's active member, priority 30, to be killed or paused),
and the broker's answers read back in ``drain.diagnosis`` when anything is missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.soak.members import GROUPS
from kafka_placement.soak.report import write_report
from kafka_placement.soak.runner import PROFILES, run_soak
from kafka_placement.soak.schedule import BROKER_KINDS, MEMBER_KINDS, fault_schedule
from kafka_placement.testing.cluster import KafkaCluster

pytestmark = pytest.mark.integration

SEED = 1
MINUTES = 3.0


def test_quick_soak_holds_every_invariant(kafka_cluster: KafkaCluster, tmp_path: Path) -> None:
    kafka_cluster.wait_ready(120.0)
    lines: list[str] = []
    summary, logs = run_soak(
        kafka_cluster,
        minutes=MINUTES,
        seed=SEED,
        profile_name="quick",
        workdir=tmp_path / "logs",
        progress=lambda _share, note: lines.append(note),
    )
    write_report(summary, logs, tmp_path / "report")
    print(json.dumps({k: v for k, v in summary.items() if k != "faults"}, indent=1))
    print(summary["faults"])
    assert summary["drain"]["ended"] == "consumed", summary["drain"]
    assert summary["verdict"] == "held", summary
    figures = {
        k: summary[k]
        for k in (
            "lost",
            "double_owned",
            "misplaced",
            "standby_consumed",
            "commits_beyond_consumed",
            "failovers_unrecovered",
            "nonmonotonic_polls",
            "poll_skips",
            "inconsistent_offsets",
        )
    }
    assert figures == dict.fromkeys(figures, 0)
    assert summary["stuck_members"] == []  # no member sat on records past its session + 60 s
    assert isinstance(summary["duplicates"], int) and summary["duplicates"] >= 0
    # both failover groups' active members (priority 30) are killed or paused: two failovers timed
    assert summary["failovers"] >= 2 and None not in summary["failover_s"].values(), summary["failover_s"]
    # 5 producers × 20 records/s × 180 s = 18,000 at the nominal rate; a loaded machine may lag
    profile = PROFILES["quick"]
    assert summary["acknowledged"] >= 0.5 * 5 * profile.rate_per_producer * MINUTES * 60
    assert all(p["failed"] == 0 and p["acked"] == p["sent"] for p in summary["producers"].values())
    # the faults injected are the seed's schedule (an independent call), in order, minus the skipped
    member_names = [name for members in GROUPS.values() for name, _c, _s, _p in members]
    planned = fault_schedule(
        SEED,
        MINUTES * 60,
        brokers=kafka_cluster.broker_ids,
        partitions=profile.partitions,
        members=member_names,
        interval_s=profile.fault_interval_s,
        member_pause_s=profile.session_timeout_ms / 1000 + 4.0,
        kinds=profile.fault_kinds,
        must_hit=["kp-high", "cf-high"],
    )
    injected = [f for f in summary["faults"] if f["kind"] in BROKER_KINDS + MEMBER_KINDS]
    assert all(set(f) == {"kind", "target", "t"} for f in summary["faults"])
    assert _is_subsequence([f["kind"] for f in injected], [f.kind for f in planned])
    assert len(injected) + summary["skipped_faults"] == len(planned)
    assert len(injected) >= 3
    for fault in injected:  # each was undone (a broker back, a member resumed or replaced) or refused
        ends = [
            f["kind"].removeprefix(fault["kind"])
            for f in summary["faults"]
            if f["kind"].startswith(fault["kind"] + "-")
            and f["target"] == fault["target"]
            and f["t"] >= fault["t"]
        ]
        assert ends and ends[0] in ("-undone", "-refused"), (fault, ends)
    assert (tmp_path / "report" / "report.html").read_text().count("<rect") > 0
    # each node's own log beside the report (what `soak --report` keeps of the brokers)
    written = kafka_cluster.write_logs(tmp_path / "report" / "cluster", lines=2000)
    assert len(written) == len(kafka_cluster.broker_ids) + 1, written
    for path in written:
        text = path.read_text()
        assert " INFO " in text and "could not be read" not in text, (path.name, text[-300:])
    # the reassignment in flight: the seed's broker drained of the topic, as the brokers now say
    move = summary["reassignment"]
    drained = kafka_cluster.broker_ids[SEED % len(kafka_cluster.broker_ids)]
    assert (move["completed"], move["copies_whole"], move["throttles_left"]) == (True, True, []), move
    assert (move["drained_broker"], move["readback"], move["missing_from_topic"]) == (drained, "complete", 0)
    assert move["partitions_moved"] > 0 and move["started_t"] < max(ack.t for ack in logs.acks)  # in flight
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(**kafka_cluster.kafka_python_settings())
    try:
        (described,) = admin.describe_topics([summary["topic"]])
    finally:
        admin.close()
    replicas = {p["partition_index"]: p["replica_nodes"] for p in described["partitions"]}
    assert len(replicas) == profile.partitions
    assert all(len(r) == 3 and drained not in r for r in replicas.values()), replicas
    # librdkafka's reconnect lines during the faults went to the run's log, not the terminal
    assert (tmp_path / "logs" / "librdkafka.log").exists()


@pytest.mark.full
def test_full_soak_with_network_faults_every_group_and_no_stuck_member(tmp_path: Path) -> None:
    """The full profile's 4-minute run on its own proxied cluster (seed 6: each failover group's active
    member killed, then one fault of each network kind, the first a silent link to coop's and fo-cf's
    coordinator): held, every network kind applied and undone on a broker, one failover timed per
    failover group, the aiokafka producers' records acknowledged, no stuck member. Own cluster: the
    session cluster has no proxies. ~10 minutes here (the run took 5 min 36 s at load 7-44)."""
    from kafka_placement.soak.members import FULL_GROUPS, active_members
    from kafka_placement.soak.schedule import NETWORK_KINDS

    with KafkaCluster(fault_proxy=True) as cluster:
        summary, logs = run_soak(cluster, minutes=4.0, seed=6, profile_name="full", workdir=tmp_path / "logs")
    print(json.dumps({k: v for k, v in summary.items() if k != "faults"}, indent=1))
    assert summary["verdict"] == "held", summary
    assert summary["stuck_members"] == [] and summary["drain"]["ended"] == "consumed"
    faults = summary["faults"]
    for kind in NETWORK_KINDS:  # applied on a broker, then undone (the toxics removed) on the same one
        (applied,) = [f for f in faults if f["kind"] == kind]
        assert applied["target"].startswith("broker-")
        assert [f["target"] for f in faults if f["kind"] == f"{kind}-undone"] == [applied["target"]]
    # the failover groups' active members (priority 30, read off the table by hand); the four that stay on
    # one protocol each killed or paused, each failover timed (fo-mig's moves in the run's middle)
    assert active_members(FULL_GROUPS) == ["kp-high", "cf-high", "cp-high", "jv-high", "mig-high"]
    hit = {f["target"] for f in faults if f["kind"] in ("member-kill", "member-pause")}
    assert {"kp-high", "cf-high", "cp-high", "jv-high"} <= hit
    assert summary["failovers"] >= 4 and summary["failovers_unrecovered"] == 0
    # members of every group consumed (the Java and consumer-protocol ones among them)
    consumers = {c.member for c in logs.consumed}
    assert {"cp-high", "cp-java", "jv-high", "jv-low"} <= consumers
    for name in ("aio-java-keyed", "aio-java-keyless"):
        producer = summary["producers"][name]
        assert producer["acked"] > 0 and producer["failed"] == 0, producer


def _is_subsequence(items: list[Any], of: list[Any]) -> bool:
    remaining = iter(of)
    return all(any(item == candidate for candidate in remaining) for item in items)
