"""The shared dev cluster's state file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_placement.testing.layout import BROKER_RACKS, ClusterLayout, new_cluster_id
from kafka_placement.testing.state import (
    ClusterState,
    StateError,
    default_state_path,
    read_state,
    remove_state,
    write_state,
)


def sample() -> ClusterState:
    lay = ClusterLayout(
        cluster_id=new_cluster_id(),
        controller_port=40000,
        broker_ports={b: 40001 + b for b in range(6)},
        broker_properties={"log.retention.ms": "1000"},
    )
    return ClusterState(
        name="kp-dev-1",
        image="kafka-placement/kafka:x",
        layout=lay,
        controller_container="kp-dev-1-controller",
        broker_containers={b: f"kp-dev-1-broker-{b}" for b in range(6)},
        started_at=1234.5,
    )


def test_roundtrip(tmp_path: Path) -> None:
    state = sample()
    path = write_state(state, tmp_path / "sub" / "state.json")
    back = read_state(path)
    assert back == state
    assert back.layout.racks == BROKER_RACKS
    data = json.loads(path.read_text())
    assert data["bootstrap_servers"] == state.layout.bootstrap_servers
    assert not list(path.parent.glob(".state-*"))  # temp file renamed away


def test_env_overrides_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_PLACEMENT_STATE", str(tmp_path / "x.json"))
    assert default_state_path() == tmp_path / "x.json"
    write_state(sample())
    assert read_state().name == "kp-dev-1"
    assert remove_state() is True
    assert remove_state() is False


def test_missing_file_says_how_to_start(tmp_path: Path) -> None:
    with pytest.raises(StateError, match=r"kafka-placement cluster up"):
        read_state(tmp_path / "nope.json")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"version": 99}', "not a kafka-placement cluster state"),
        ("[1, 2]", "not a kafka-placement cluster state"),
        ('{"version": 1, "name": "x"}', "malformed cluster state"),
    ],
)
def test_bad_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(StateError, match=message):
        read_state(path)


def test_inconsistent_ports_are_rejected(tmp_path: Path) -> None:
    data = sample().to_json()
    data["broker_ports"]["0"] = data["broker_ports"]["1"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    with pytest.raises(StateError, match="ports must be distinct"):
        read_state(path)
