"""The command line's one error rule, over every subcommand: a hostile argument or file ends in exit 2
and one line ``kafka-placement[ <cmd>]: error: …`` on stderr, never a traceback, within seconds; a bug
is one line too (exit 3) unless ``--debug`` asks for the traceback."""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import time
from pathlib import Path

import pytest

from kafka_placement import cli
from kafka_placement.cli import describe_failure, main

HOSTILE_NUMBERS = ["-1", "0", "1e11", "99999999999999999999", "nan", "", "x", "½", "2147483648"]


def _files(tmp: Path) -> dict[str, str]:
    (tmp / "empty.json").write_text("")
    (tmp / "binary.json").write_bytes(b"\xff\xfe\x00{\x80")
    (tmp / "deep.json").write_text("[" * 50_000 + "]" * 50_000)
    (tmp / "wrong.json").write_text('{"version": 1, "partitions": "all"}')
    (tmp / "text.json").write_text("héllo")
    (tmp / "plan.json").write_text('{"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}')
    (tmp / "props.properties").write_bytes(b"security.protocol=\xff\xfeNOPE\n")
    return {
        "missing": str(tmp / "missing.json"),
        "directory": str(tmp),
        "empty": str(tmp / "empty.json"),
        "binary": str(tmp / "binary.json"),
        "deep": str(tmp / "deep.json"),
        "wrong": str(tmp / "wrong.json"),
        "text": str(tmp / "text.json"),
        "plan": str(tmp / "plan.json"),
    }


FILE_KINDS = ["missing", "directory", "empty", "binary", "deep", "wrong", "text"]
UNREACHABLE = ["--bootstrap-server", "127.0.0.1:1", "--timeout", "3"]


def cases() -> list[tuple[str, list[str]]]:
    """(id, argv with {file} placeholders) — every one of them invalid."""
    out: list[tuple[str, list[str]]] = []
    for kind in FILE_KINDS:
        out += [
            (
                f"reassign-plan-current-{kind}",
                ["reassign", "plan", "--current", f"{{{kind}}}", "--brokers", "0:a,1:b"],
            ),
            (f"reassign-apply-plan-{kind}", ["reassign", "apply", *UNREACHABLE, "--plan", f"{{{kind}}}"]),
            (f"reassign-verify-plan-{kind}", ["reassign", "verify", *UNREACHABLE, "--plan", f"{{{kind}}}"]),
            (
                f"reassign-cancel-plan-{kind}",
                ["reassign", "cancel", *UNREACHABLE, "--plan", f"{{{kind}}}"],
            ),
            (f"audit-command-config-{kind}", ["audit", "--command-config", f"{{{kind}}}"]),
            (f"plan-input-{kind}", ["plan", "--input", f"{{{kind}}}-nope", "--output", "{directory}/o"]),
        ]
    for value in HOSTILE_NUMBERS:
        out += [
            (f"plan-sample-{value}", ["plan", "--sample", value]),
            (f"plan-partitions-{value}", ["plan", "--sample", "10", "--partitions", value]),
            (
                f"plan-distinct-{value}",
                ["plan", "--sample", "10", "--distinct-keys", value, "--partitions", "0"],
            ),
            (f"demo-records-{value}", ["demo", "--records", value]),
            (f"demo-partitions-{value}", ["demo", "--partitions", value]),
            (f"reassign-brokers-{value}", ["reassign", "plan", "--current", "{wrong}", "--brokers", value]),
            (f"conformance-scenarios-{value}", ["conformance", "--scenarios", value]),
            (f"audit-timeout-{value}", ["audit", "--bootstrap-server", "127.0.0.1:1", "--timeout", value]),
            (f"cluster-brokers-{value}", ["cluster", "up", "--brokers", value]),
            (
                f"reassign-throttle-{value}",
                ["reassign", "apply", *UNREACHABLE, "--plan", "{plan}", "--throttle", value],
            ),
            (
                f"reassign-log-dir-throttle-{value}",
                [
                    "reassign",
                    "apply",
                    *UNREACHABLE,
                    "--plan",
                    "{plan}",
                    "--replica-alter-log-dirs-throttle",
                    value,
                ],
            ),
            (
                f"reassign-cancel-timeout-{value}",
                ["reassign", "cancel", "--all", *UNREACHABLE[:2], "--timeout", value],
            ),
        ]
    for server in ["", "nohost", "127.0.0.1:0", "127.0.0.1:99999", "h:x", ",", "[::1", "ü:1"]:
        out += [
            (f"audit-server-{server!r}", ["audit", "--bootstrap-server", server]),
            (f"reassign-plan-server-{server!r}", ["reassign", "plan", "--bootstrap-server", server]),
            (f"plan-topic-server-{server!r}", ["plan", "--topic", "t", "--bootstrap-server", server]),
        ]
    for setting in [
        "nokey",
        "=v",
        "security.protocol=TLS",
        "sasl.mechanism=MD5",
        "ssl.truststore.location=/x.jks",
    ]:
        out.append(
            (f"audit-X-{setting}", ["audit", *UNREACHABLE, "-X", setting, "-X", "security.protocol=SSL"])
        )
    for argv in (
        ["nope"],
        ["audit", "--nope"],
        ["reassign"],
        ["reassign", "plan", "--scope", "galaxy"],
        ["plan", "--format", "xls", "--sample", "1"],
        ["cluster", "up", "--security", "kerberos"],
        ["cluster", "up", "--racks", ""],
        ["audit"],
        ["reassign", "apply"],
        ["reassign", "cancel"],
        ["reassign", "cancel", "--all", "--plan", "x.json"],
        ["demo", "--bootstrap-server", ""],
        ["group"],
        ["group", "describe"],
        ["rebalance"],
        ["soak", "--profile", "endless"],
    ):
        out.append(("argv-" + "-".join(argv), list(argv)))
    out += [
        (
            "reassign-apply-one-at-a-time-no-wait",
            ["reassign", "apply", *UNREACHABLE, "--plan", "{plan}", "--one-replica-at-a-time", "--no-wait"],
        ),
        (
            "reassign-apply-one-at-a-time-value",
            ["reassign", "apply", *UNREACHABLE, "--plan", "{plan}", "--one-replica-at-a-time=2"],
        ),
        ("group-describe-server-empty", ["group", "describe", "g", "--bootstrap-server", ""]),
        ("group-describe-unreachable", ["group", "describe", "g", *UNREACHABLE]),
        (
            "broker-plugin-version-nope",
            ["broker-plugin", "--kafka-version", "nope", "--out", "{directory}/o"],
        ),
        ("broker-plugin-version-3", ["broker-plugin", "--kafka-version", "3.9.0", "--out", "{directory}/o"]),
        (
            "client-assignor-version-nope",
            ["client-assignor", "--kafka-version", "nope", "--out", "{directory}/o"],
        ),
        (
            "client-assignor-priority",
            [
                "client-assignor",
                "--kafka-version",
                "4.4.0",
                "--out",
                "{directory}/o",
                "--priority",
                "2147483648",
            ],
        ),
        ("rebalance-plan-loads-missing", ["rebalance", "plan", "--loads", "{missing}"]),
        ("rebalance-plan-loads-binary", ["rebalance", "plan", "--loads", "{binary}"]),
        ("rebalance-plan-loads-wrong", ["rebalance", "plan", "--loads", "{wrong}"]),
        ("rebalance-plan-band", ["rebalance", "plan", "--loads", "{wrong}", "--band", "-1"]),
        ("rebalance-loads-unreachable", ["rebalance", "loads", *UNREACHABLE]),
        ("soak-minutes-negative", ["soak", "--minutes", "-1"]),
        ("soak-minutes-huge", ["soak", "--minutes", "1e9"]),
        ("soak-seed-text", ["soak", "--seed", "abc"]),
        ("plan-conf-no-value", ["plan", "--sample", "10", "--conf", "spark.x", "--output", "{directory}/o"]),
        ("plan-conf-not-spark", ["plan", "--sample", "10", "--conf", "x=1", "--output", "{directory}/o"]),
        ("plan-spark-config-missing", ["plan", "--sample", "10", "--spark-config", "{missing}"]),
        ("plan-spark-config-directory", ["plan", "--sample", "10", "--spark-config", "{directory}"]),
        ("plan-spark-config-binary", ["plan", "--sample", "10", "--spark-config", "{binary}"]),
        ("demo-conf-not-spark", ["demo", "--conf", "x=1"]),
        ("unreachable-audit", ["audit", *UNREACHABLE]),
        ("unreachable-reassign-plan", ["reassign", "plan", *UNREACHABLE]),
        ("unreachable-verify", ["reassign", "verify", *UNREACHABLE, "--plan", "{wrong}"]),
        ("partial-racks", ["reassign", "plan", "--current", "{text}", "--brokers", "0:a,1,2:b"]),
        ("plan-output-is-a-file", ["plan", "--sample", "10", "--output", "{text}"]),
        ("plan-output-unwritable", ["plan", "--sample", "10", "--output", "{text}/out"]),
        (
            "reassign-output-directory",
            ["reassign", "plan", "--current", "{text}", "--brokers", "0:a", "--output", "{directory}"],
        ),
        (
            "reassign-rollback-unwritable",
            [
                "reassign",
                "plan",
                "--current",
                "{text}",
                "--brokers",
                "0:a",
                "--rollback",
                "{text}/rollback.json",
            ],
        ),
    ]
    return out


CASES = cases()


class HeavyWorkStarted(AssertionError):
    """A case got past validation into Spark, a JVM or containers: its check came too late."""


@pytest.fixture(autouse=True)
def _no_heavy_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> object:
        raise HeavyWorkStarted("heavy work started before the input was validated")

    monkeypatch.setattr("kafka_placement.spark.session.spark_session", refuse)
    monkeypatch.setattr("kafka_placement.conformance.bridge.reference", refuse)
    monkeypatch.setattr("kafka_placement.testing.cluster.KafkaCluster.start", refuse)


def test_there_are_hundreds_of_cases() -> None:
    assert len(CASES) >= 150


@pytest.mark.parametrize(("case", "argv"), CASES, ids=[c for c, _ in CASES])
def test_hostile_input_one_line_exit_2(
    case: str, argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _files(tmp_path)
    argv = [a.format(**files) for a in argv]
    t0 = time.monotonic()
    with pytest.raises(SystemExit) if _is_parse_error(argv) else _no_exit() as info:
        code = main(argv)
    if info is not None and getattr(info, "value", None) is not None:
        code = int(info.value.code or 0)
    err = capsys.readouterr().err
    assert code == 2, (case, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, (case, err)
    assert lines[0].startswith("kafka-placement") and ": error: " in lines[0], lines[0]
    assert "Traceback" not in err
    assert time.monotonic() - t0 < 20


def _is_parse_error(argv: list[str]) -> bool:
    """argparse reports its own errors by SystemExit(2); everything else returns from main()."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            cli.build_parser().parse_args(argv)
    except SystemExit:
        return True
    return False


class _no_exit:
    value = None

    def __enter__(self) -> _no_exit:
        return self

    def __exit__(self, *exc: object) -> bool:
        return False


def test_a_bug_is_one_line_exit_3_and_debug_shows_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(args: argparse.Namespace) -> int:
        raise RuntimeError("invariant broken\nsecond line")

    real = cli.build_parser

    def patched() -> argparse.ArgumentParser:
        parser = real()
        parser.set_defaults(handler=boom)
        for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
            for sub in action.choices.values():  # type: ignore[union-attr]
                sub.set_defaults(handler=boom)
        return parser

    monkeypatch.setattr(cli, "build_parser", patched)
    assert main(["audit", "--bootstrap-server", "h:1"]) == cli.INTERNAL_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "unexpected RuntimeError: invariant broken (+1 more lines with --debug)" in err
    assert "re-run with --debug" in err
    assert main(["--debug", "audit", "--bootstrap-server", "h:1"]) == cli.INTERNAL_ERROR
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (
            ModuleNotFoundError("No module named 'pyspark'", name="pyspark"),
            "pip install 'kafka-placement[spark]'",
        ),
        (ModuleNotFoundError("x", name="confluent_kafka.admin"), "pip install 'kafka-placement[confluent]'"),
        (
            FileNotFoundError(2, "No such file or directory", "/x/plan.json"),
            "No such file or directory: /x/plan.json",
        ),
        (PermissionError(13, "Permission denied", "/out"), "Permission denied: /out"),
        (RecursionError(), "nested too deeply"),
        (MemoryError(), "out of memory"),
    ],
)
def test_environment_failures_are_user_errors(exc: BaseException, message: str) -> None:
    text, code = describe_failure(exc, debug=False)
    assert code == 2 and message in text


def test_every_subcommand_is_covered() -> None:
    covered = {argv[0].replace("-", "_") for _, argv in CASES}  # broker-plugin is module broker_plugin
    assert set(cli.SUBCOMMAND_MODULES) <= covered | {"nope"}


def test_case_ids_are_unique() -> None:
    ids = [c for c, _ in CASES]
    assert len(ids) == len(set(ids)), [i for i, n in itertools.groupby(sorted(ids)) if len(list(n)) > 1]
