"""``kafka-placement soak``: bad input is one line and exit 2, within seconds, before any cluster starts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kafka_placement.cli import main


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--minutes", "0", "--seed", "1"], "--minutes must be in (0, 1440], got 0.0"),
        (["--minutes", "1441", "--seed", "1"], "--minutes must be in (0, 1440], got 1441.0"),
        (["--minutes", "3", "--seed", "-1"], "--seed must be in [0, 2**63), got -1"),
    ],
)
def test_bad_values_exit_2_with_one_line_before_any_cluster(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    assert main(["soak", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kafka-placement soak: error: ") and needle in err
    assert time.monotonic() - started < 10


def test_a_directory_as_the_json_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["soak", "--minutes", "3", "--seed", "1", "--json", str(tmp_path)]) == 2
    assert "is a directory; give a file" in capsys.readouterr().err


def test_an_unknown_profile_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["soak", "--minutes", "3", "--seed", "1", "--profile", "huge"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'huge'" in capsys.readouterr().err


def test_the_verdict_line_names_group_coordinator_outages_only_when_there_were_some() -> None:
    from kafka_placement.cli.soak import _outage_words

    assert _outage_words({}) == "" and _outage_words({"g": []}) == ""
    outages = {"g": [[10.0, 160.4, 150.4]], "h": [[10.0, 20.0, 10.0], [30.0, 35.0, 5.0]]}
    assert _outage_words(outages) == ", 3 group-coordinator outage(s) (longest 150 s)"


def test_the_verdict_line_names_a_partition_kafkas_coordinator_failed_to_load() -> None:
    from kafka_placement.cli.soak import _load_failure_words

    assert _load_failure_words([]) == ""
    failure = {
        "partition": "__consumer_offsets-11",
        "brokers": [2, 4],
        "times": 8,
        "first": "2026-11-30 17:41:43,828",
        "last": "2026-11-30 17:55:01,714",
        "groups": ["kp-soak-6c4cc9-fo-mig"],
        "cause": "java.lang.IllegalStateException: Cannot set the epoch of X-0 to 2 because the partition "
        "is still owned at epoch 2",
    }
    assert _load_failure_words([failure]) == (
        ", Kafka's group coordinator FAILED to load __consumer_offsets-11 8 time(s) (2026-11-30 "
        "17:41:43,828 to 2026-11-30 17:55:01,714, brokers 2, 4; groups kp-soak-6c4cc9-fo-mig: "
        "java.lang.IllegalStateException: Cannot set the epoch of X-0 to 2 because the partition is still "
        "owned at epoch 2)"
    )
    assert "; groups" not in _load_failure_words([{**failure, "groups": []}])


def test_the_verdict_line_says_how_the_migration_went_only_in_a_run_that_had_one() -> None:
    from kafka_placement.cli.soak import _migration_words

    assert _migration_words(None) == ""
    held = {
        "group": "fo-mig",
        "held": True,
        "problems": [],
        "steps": [{"member": "mig-low", "close_s": 0.4}, {"member": "mig-high", "close_s": 1.2}],
    }
    assert _migration_words(held) == (
        ", fo-mig moved to the consumer protocol member by member: mig-low (closed in 0.4 s), "
        "mig-high (closed in 1.2 s)"
    )
    failed = {**held, "held": False, "problems": ["a", "b", "c"]}
    assert _migration_words(failed) == ", migration of fo-mig FAILED (a; b)"


def test_the_verdict_line_sets_the_failovers_outside_coordinator_outages_against_their_bound() -> None:
    from kafka_placement.cli.soak import _bounded_failover_words

    assert _bounded_failover_words(None) == ""
    assert _bounded_failover_words({"p99": None, "bound": 9.0, "left_out": 0}) == ""
    assert _bounded_failover_words({"p99": 6.9, "bound": 9.0, "left_out": 0}) == " (bound 9.0 s: met)"
    assert _bounded_failover_words({"p99": 9.4, "bound": 9.0, "left_out": 2}) == (
        " (2 inside coordinator outages; outside them p99 9.4 s, bound 9.0 s: NOT met)"
    )


def test_the_verdict_line_counts_every_stuck_member_not_only_the_twenty_detailed() -> None:
    from kafka_placement.cli.soak import verdict_line

    summary = {
        "verdict": "violated",
        "acknowledged": 1234,
        "lost": 0,
        "duplicates": 5,
        "double_owned": 0,
        "misplaced": 0,
        "standby_consumed": 0,
        "nonmonotonic_polls": 0,
        "poll_skips": 0,
        "inconsistent_offsets": 0,
        "faults": [{"kind": "broker-kill", "target": "broker-1", "t": 1.0}, {"kind": "broker-kill-undone"}],
        "stuck": 23,
        "stuck_members": [{}] * 20,
        "failover_s": {"p50": 6.0, "p99": 7.0, "max": 7.0},
        "stalled_producers": {},
    }
    assert verdict_line(summary, 7) == (
        "soak violated: 1,234 acknowledged, 0 lost, 5 duplicates, 0 double-owned, 0 misplaced, "
        "0 standby-consumed, 0 nonmonotonic polls, 0 poll skips, 0 inconsistent offsets, 1 faults, "
        "23 stuck members, failover p50/p99/max 6.0/7.0/7.0 s (seed 7)"
    )


def test_a_stalled_producer_is_named_with_the_reason_its_client_gave_most_often() -> None:
    from kafka_placement.cli.soak import _stall_words

    summary = {
        "stalled_producers": {"aio-java-keyed": 1407.7, "kp-java-keyed": 200.0},
        "producers": {
            "aio-java-keyed": {"failed_by": {"OutOfOrderSequenceNumber": 12, "KafkaTimeoutError": 74894}},
            "kp-java-keyed": {"failed_by": {}},
        },
    }
    assert _stall_words(summary) == (
        ", producer aio-java-keyed stalled 1407.7 s (74,894 failed: KafkaTimeoutError)"
        ", producer kp-java-keyed stalled 200.0 s"
    )
    # a summary written before the reasons were kept
    assert _stall_words({"stalled_producers": {"x": 1.0}}) == ", producer x stalled 1.0 s"
