"""``kafka-placement cluster``: bad flags exit 2 with one line before anything starts; the module
alias ``python -m kafka_placement.testing`` reaches the same command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_placement.cli import main
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.testing.layout import cluster_racks


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--brokers", "0"], "brokers 0 out of range [1, 32]"),
        (["--brokers", "33"], "brokers 33 out of range [1, 32]"),
        (["--racks", "a,,b"], "rack '' must be 1-255 printable characters"),
        (["--racks", "a,b,c", "--brokers", "2"], "3 racks for 2 brokers"),
        (["--security", "tls"], "security 'tls' is not one of plaintext, ssl, sasl_plaintext, sasl_ssl"),
        (["--security", "ssl", "--acls"], "acls need a SASL listener"),
        (["--security", "sasl_ssl", "--user", "bob", "--client-config", "x"], "--user 'bob' is not one of"),
        (["--user", "admin", "--client-config", "x"], "--user needs a SASL cluster"),
    ],
)
def test_bad_flags_exit_2_one_line(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("KAFKA_PLACEMENT_STATE", str(tmp_path / "state.json"))
    assert main(["cluster", "up", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kafka-placement cluster: error: ")
    assert message in err


def test_cluster_racks() -> None:
    assert cluster_racks() == {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert cluster_racks(3, ["r1", "r2", "r3"]) == {0: "r1", 1: "r2", 2: "r3"}
    assert cluster_racks(None, ["x", "y"]) == {0: "x", 1: "y"}
    assert cluster_racks(5, ["a", "b"]) == {0: "a", 1: "b", 2: "a", 3: "b", 4: "a"}
    assert cluster_racks(2) == {0: "rack1", 1: "rack3"}
    with pytest.raises(InvalidArgumentError):
        cluster_racks(1, [])


def test_module_alias_delegates(tmp_path: Path) -> None:
    env = {**os.environ, "KAFKA_PLACEMENT_STATE": str(tmp_path / "none.json")}
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_placement.testing", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert f"no healthy cluster: no shared cluster state at {tmp_path / 'none.json'}" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_placement.testing", "up", "--brokers", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "kafka-placement cluster: error: brokers 0 out of range [1, 32]"
