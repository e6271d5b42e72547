"""The rolling migration in the full soak: its steps' order among the faults, the plan that leaves the
migrating group's takeover to the migration, a member switched from one client to another, and the
judgement (each problem caught on a hand-built outcome)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

from kafka_placement.soak.events import Event, Life
from kafka_placement.soak.members import FULL_GROUPS, Members
from kafka_placement.soak.migration import (
    FULL_MIGRATION,
    MIGRATING_GROUP,
    MigrationStep,
    StepDone,
    judge_migration,
    timeline,
)
from kafka_placement.soak.run_plan import PROFILES, plan_run
from kafka_placement.soak.schedule import PlannedFault

STEPS = (MigrationStep("low", "confluent-consumer", 0.25), MigrationStep("high", "confluent-consumer", 0.5))


def test_steps_run_between_the_faults_in_time_order_and_after_a_fault_of_the_same_second() -> None:
    faults = [
        PlannedFault(10.0, "member-kill", "low", 3.0),
        PlannedFault(30.0, "broker-kill", "broker-1", 5.0),
        PlannedFault(50.0, "member-pause", "high", 10.0),
    ]
    order = [
        (at, item.member if isinstance(item, MigrationStep) else item.kind)
        for at, item in timeline(faults, STEPS, 120.0)
    ]
    assert order == [
        (10.0, "member-kill"),
        (30.0, "broker-kill"),
        (30.0, "low"),
        (50.0, "member-pause"),
        (60.0, "high"),
    ]


def test_the_full_profile_moves_fo_mig_lowest_priority_first_and_leaves_its_takeover_to_the_migration() -> (
    None
):
    full = PROFILES["full"]
    assert full.migration == FULL_MIGRATION and not PROFILES["quick"].migration
    priorities = {name: prio for name, _client, _strategy, prio in FULL_GROUPS[MIGRATING_GROUP]}
    moved = [step.member for step in full.migration]
    assert sorted(moved) == sorted(priorities)  # every member of the group moves
    assert [priorities[m] for m in moved] == sorted(priorities.values())  # lowest first
    assert all(0 < a.at_fraction < b.at_fraction < 1 for a, b in itertools.pairwise(full.migration))
    plan = plan_run(5, 4.0, "full", [0, 1, 2, 3, 4, 5])
    assert "mig-high" not in plan.must_hit
    assert {"kp-high", "cf-high", "cp-high", "jv-high"} <= set(plan.must_hit)


def _members(tmp_path: Path, events: list[Event]) -> Members:
    members = Members(
        tmp_path,
        "t",
        {"kafka-python": {}, "confluent-consumer": {}},
        6000,
        "px",
        events.append,
        {"fo-mig": [("high", "kafka-python", "failover", 30)]},
        migration_ready=("high",),
    )
    return members


def test_a_switched_member_is_closed_through_its_stdin_and_started_again_as_the_other_client(
    tmp_path: Path,
) -> None:
    events: list[Event] = []
    members = _members(tmp_path, events)
    seen = tmp_path / "seen"
    # a stand-in member process: ends when told "close" on stdin, as member_process does
    members.procs["high"] = subprocess.Popen(
        [sys.executable, "-c", f"import sys; open({str(seen)!r}, 'w').write(sys.stdin.readline())"],
        stdin=subprocess.PIPE,
        text=True,
    )
    commands: list[list[str]] = []
    members._command = lambda name: (
        commands.append([name, members.specs[name][1]])
        or [  # type: ignore[method-assign]
            sys.executable,
            "-c",
            "import sys; sys.stdin.readline()",
        ]
    )
    close_s = members.switch("high", "confluent-consumer", timeout_s=30)
    assert seen.read_text() == "close\n" and 0 <= close_s < 30
    assert members.specs["high"] == ("fo-mig", "confluent-consumer", "failover", 30)
    assert commands == [["high", "confluent-consumer"]]
    assert [(e.member, e.up) for e in events if isinstance(e, Life)] == [("high", False), ("high", True)]
    members.watch()
    assert members.exits == []  # the closed process is not a crash
    members.close_all(timeout_s=10)


def test_a_member_config_says_whether_it_is_ready_for_the_move(tmp_path: Path) -> None:
    import json

    members = _members(tmp_path, [])
    members._command("high")
    config = json.loads((tmp_path / "member-high.json").read_text())
    assert config["migration_ready"] is True and config["client"] == "kafka-python"


CONSUMER = {"stage": "consumer", "problems": [], "honoured": True}


def test_the_judgement_holds_only_when_every_step_ran_no_replacement_crashed_and_the_group_moved() -> None:
    done = [
        StepDone("low", "kafka-python", "confluent-consumer", 100.0, 0.4),
        StepDone("high", "kafka-python", "confluent-consumer", 200.0, 0.6),
    ]
    held = judge_migration(STEPS, done, [], CONSUMER)
    assert held["held"] and held["problems"] == [] and [s["member"] for s in held["steps"]] == ["low", "high"]
    # a crash before the step is the old process's (a fault's), not the replacement's
    assert judge_migration(STEPS, done, [("low", 99.0, 1)], CONSUMER)["held"]
    cases = {
        "step high → confluent-consumer did not run": judge_migration(STEPS, done[:1], [], CONSUMER),
        "low as confluent-consumer ended on its own (exit code 1)": judge_migration(
            STEPS, done, [("low", 150.0, 1)], CONSUMER
        ),
        "the group is mid-migration after the run, not on the consumer protocol": judge_migration(
            STEPS, done, [], {"stage": "mid-migration", "problems": []}
        ),
        "member x: priority not visible": judge_migration(
            STEPS, done, [], {"stage": "consumer", "problems": ["member x: priority not visible"]}
        ),
        "the group could not be described after the run: NoBrokersAvailable": judge_migration(
            STEPS, done, [], None, "NoBrokersAvailable"
        ),
    }
    for problem, entry in cases.items():
        assert not entry["held"] and entry["problems"] == [problem], entry
