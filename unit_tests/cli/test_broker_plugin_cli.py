"""``kafka-placement broker-plugin``: the jar for a Kafka version and the settings that load it."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from kafka_placement.broker_plugin.maven import BrokerPluginUnavailable, resolve
from kafka_placement.cli import main
from kafka_placement.versions import KAFKA_VERSION


@pytest.mark.parametrize("version", ["3.9.0", "4.4", "latest", "4.4.0; rm -rf /"])
def test_bad_version_is_one_line_exit_2_before_any_work(
    version: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("Maven or javac ran for a bad version")

    monkeypatch.setattr("kafka_placement.broker_plugin.build.resolve", no_work)
    monkeypatch.setattr("kafka_placement.broker_plugin.build.build_jar", no_work)
    assert main(["broker-plugin", "--kafka-version", version, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kafka-placement broker-plugin: error: Kafka version")
    assert not (tmp_path / "out").exists()  # checked before anything is written


def test_unwritable_out_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["broker-plugin", "--kafka-version", KAFKA_VERSION, "--out", str(blocker)]) == 2
    assert "--out" in capsys.readouterr().err


def test_writes_the_jar_and_prints_broker_and_client_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        resolve(KAFKA_VERSION)
    except BrokerPluginUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    code = main(
        [
            "broker-plugin",
            "--kafka-version",
            KAFKA_VERSION,
            "--out",
            str(tmp_path),
            "--priority",
            "10",
            "--rack",
            "az1",
            "--session-timeout-ms",
            "6000",
        ]
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    jar = tmp_path / f"kafka-placement-broker-{KAFKA_VERSION}.jar"
    with zipfile.ZipFile(jar) as archive:
        names = set(archive.namelist())
    assert "io/kafkaplacement/broker/FailoverServerAssignor.class" in names
    assert "io/kafkaplacement/broker/RackPriorityReplicaSelector.class" in names
    assert not any(name.startswith("org/") for name in names)  # the broker supplies Kafka's classes
    settings = [line for line in out if not line.startswith("#")]
    assert settings == [
        "group.consumer.assignors=uniform,range,io.kafkaplacement.broker.FailoverServerAssignor",
        "replica.selector.class=io.kafkaplacement.broker.RackPriorityReplicaSelector",
        "group.consumer.min.session.timeout.ms=6000",
        "group.consumer.session.timeout.ms=6000",
        "group.consumer.min.session.timeout.ms=6000",  # the controllers' copy
        "group.consumer.session.timeout.ms=6000",
        "group.protocol=consumer",
        "group.remote.assignor=failover",
        "client.rack=az1#priority=10",
    ]


def test_bad_rack_or_priority_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "broker-plugin",
                "--kafka-version",
                KAFKA_VERSION,
                "--out",
                str(tmp_path),
                "--priority",
                "2147483648",
            ]
        )
        == 2
    )
    assert (
        main(["broker-plugin", "--kafka-version", KAFKA_VERSION, "--out", str(tmp_path), "--rack", "a#b"])
        == 2
    )
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and all(line.startswith("kafka-placement broker-plugin: error:") for line in lines)
