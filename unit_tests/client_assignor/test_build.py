"""``kafka-placement client-assignor`` and the build behind it: versions checked before any work, one-line
errors, the jar for every Kafka 4.x client working inside that version's own ``kafka-clients``."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from unit_tests.client_assignor.harness import assign_request, assigned, parse_answer, start_client_harness
from unit_tests.client_assignor.wire import python_subscription

from kafka_placement.assignment.userdata import encode_failover_assignment
from kafka_placement.broker_plugin.build import jar_name as broker_jar_name
from kafka_placement.cli import main
from kafka_placement.client_assignor.build import BUILD, ClientAssignorUnavailable, consumer_settings
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.versions import KAFKA_VERSION

CLI = ["client-assignor", "--out"]


def _maven_or_skip() -> None:
    try:
        BUILD.resolve(KAFKA_VERSION)
    except ClientAssignorUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line (stderr also has the progress line 'building for ...')."""
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("client-assignor: building"), lines
    assert lines[1].startswith("kafka-placement client-assignor: error: "), lines
    return lines[1]


@pytest.mark.parametrize("version", ["3.9.0", "4.4", "latest", "4.4.0; rm -rf /", "04.4.0x"])
def test_bad_version_is_one_line_exit_2_before_any_work(
    version: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("Maven or javac ran for a bad version")

    monkeypatch.setattr(type(BUILD), "resolve", no_work)
    monkeypatch.setattr(type(BUILD), "build_jar", no_work)
    assert main([*CLI, str(tmp_path / "out"), "--kafka-version", version]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kafka-placement client-assignor: error: Kafka version")
    assert not (tmp_path / "out").exists()


def test_unpublished_version_and_no_network_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _maven_or_skip()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # nothing cached: Maven must run
    assert main([*CLI, str(tmp_path / "a"), "--kafka-version", "4.99.0"]) == 2
    err = _error_line(capsys)
    assert "Kafka 4.99.0 is not on Maven Central" in err, err
    # offline: Maven with an empty local repository in offline mode (its settings in a user.home of our own)
    home = tmp_path / "home"
    (home / ".m2").mkdir(parents=True)
    (home / ".m2" / "settings.xml").write_text(
        f"<settings><offline>true</offline><localRepository>{tmp_path / 'm2'}</localRepository></settings>"
    )
    monkeypatch.setenv("MAVEN_OPTS", f"-Duser.home={home}")
    assert main([*CLI, str(tmp_path / "b"), "--kafka-version", KAFKA_VERSION]) == 2
    err = _error_line(capsys)
    assert "Maven could not reach its repository" in err and "\x1b" not in err, err


def test_writes_the_jar_and_prints_consumer_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _maven_or_skip()
    assert (
        main(
            [
                *CLI,
                str(tmp_path),
                "--kafka-version",
                KAFKA_VERSION,
                "--priority",
                "30",
                "--rack",
                "az1",
                "--migration-ready",
            ]
        )
        == 0
    )
    with zipfile.ZipFile(tmp_path / f"kafka-placement-client-{KAFKA_VERSION}.jar") as archive:
        names = set(archive.namelist())
    assert {
        "io/kafkaplacement/client/FailoverAssignor.class",
        "io/kafkaplacement/client/PriorityAssignor.class",
        "io/kafkaplacement/broker/RackPriority.class",
    } <= names
    assert not any(name.startswith("org/") for name in names)  # the consumer supplies Kafka's classes
    settings = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert settings == [
        "group.protocol=classic",
        "partition.assignment.strategy=io.kafkaplacement.client.FailoverAssignor",
        "failover.priority=30",
        "failover.migration.ready=true",
        "client.rack=az1#priority=30",
    ]
    assert main([*CLI, str(tmp_path), "--kafka-version", KAFKA_VERSION, "--name", "priority"]) == 0
    settings = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert settings == [
        "group.protocol=classic",
        "partition.assignment.strategy=io.kafkaplacement.client.PriorityAssignor",
        "failover.priority=<n>",
    ]


def test_consumer_settings_refuse_what_the_assignor_would() -> None:
    assert consumer_settings(None, rack="az1", migration_ready=True)["client.rack"] == "az1"
    assert "failover.priority" not in consumer_settings(None)
    for bad in [{"priority": 2**31}, {"priority": 1, "rack": "a#b"}, {"priority": True}]:
        with pytest.raises(InvalidArgumentError):
            consumer_settings(bad.pop("priority"), **bad)  # type: ignore[arg-type]


def test_the_broker_plugin_jar_name_is_unchanged_by_the_shared_build() -> None:
    # the shared JavaBuild digests the same sources the same way: a cached broker jar stays valid
    assert broker_jar_name("4.4.0").startswith("kafka-placement-broker-4.4.0-")
    assert BUILD.jar_name("4.4.0").startswith("kafka-placement-client-4.4.0-")
    assert BUILD.jar_name("4.4.0") != BUILD.jar_name("4.0.0")


@pytest.mark.parametrize("version", ["4.0.0", "4.1.0", "4.2.0", "4.3.0", "4.4.0"])
def test_every_4x_client(version: str, tmp_path: Path) -> None:
    """Built against and run inside each minor's own kafka-clients: a leader, a member, a refused setting."""
    harness = start_client_harness(tmp_path, version)
    try:
        subs = [("a", python_subscription(["t0"], 1)), ("b", python_subscription(["t0"], 2))]
        answer = parse_answer(harness.ask(assign_request("P", [4], subs)))
        a, b = assigned(answer)
        assert (a.topics, b.topics, b.user_data) == (set(), {0}, encode_failover_assignment(2))
        assert harness.receive({"failover.priority": 2}, [b.wire]) == []
        assert harness.configure({"failover.priority": "x"}).status == "ERR"
    finally:
        harness.close()
