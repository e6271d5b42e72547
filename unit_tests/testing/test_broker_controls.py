"""``BrokerControls.kill_broker`` against fake docker-py containers (no engine needed)."""

from __future__ import annotations

from typing import Any

import pytest
from docker.errors import APIError

from kafka_placement.testing.broker_controls import BrokerControls

ZOMBIE = (  # the engine's answer in the soak (docker 20.10)
    "Cannot kill container: b5ae4e88327d: container b5ae4e88327d PID 8953 is zombie and can not be killed"
)


class FakeContainer:
    def __init__(self, refuse: str | None, status_after: str) -> None:
        self.refuse, self.status, self.status_after = refuse, "running", status_after
        self.killed = self.waited = 0

    def kill(self, signal: int) -> None:
        self.killed += 1
        if self.refuse is not None:
            raise APIError(self.refuse)
        self.status = "exited"

    def wait(self, timeout: float) -> dict[str, Any]:
        self.waited += 1
        if self.status_after == "running":  # docker-py's wait on a container that goes on running
            raise TimeoutError("read timed out")
        if self.refuse is not None:
            self.status = self.status_after
        return {"StatusCode": 137}

    def reload(self) -> None:
        pass


def controls(container: FakeContainer) -> tuple[BrokerControls, list[str]]:
    said: list[str] = []
    cluster = BrokerControls()
    cluster._containers = {3: container}
    cluster._stopped = set()
    cluster._log = said.append
    cluster._broker_container = lambda broker_id: cluster._containers[broker_id]  # type: ignore[method-assign]
    return cluster, said


def test_a_broker_is_killed_and_waited_for() -> None:
    cluster, said = controls(FakeContainer(None, "exited"))
    cluster.kill_broker(3)
    assert said == ["broker 3 killed (SIGKILL)"] and 3 in cluster._stopped


def test_a_container_already_exiting_counts_as_killed() -> None:
    """The soak's crash: the engine refused SIGKILL for a container whose process had just died."""
    container = FakeContainer(ZOMBIE, "exited")
    cluster, said = controls(container)
    cluster.kill_broker(3)
    assert container.waited == 1 and 3 in cluster._stopped
    assert said == ["broker 3 was exiting already (the engine refused SIGKILL)"]


def test_a_refusal_for_a_container_still_running_is_raised() -> None:
    """The engine's refusal, not the wait's timeout that follows it."""
    container = FakeContainer("permission denied", "running")
    cluster, _ = controls(container)
    with pytest.raises(APIError, match="permission denied"):
        cluster.kill_broker(3)
    assert container.waited == 1


class LoggingContainer:
    def __init__(self, text: str | None) -> None:
        self.text, self.tails = text, []

    def logs(self, tail: int) -> bytes:
        self.tails.append(tail)
        if self.text is None:
            raise APIError("No such container")
        return self.text.encode()


def test_write_logs_writes_each_node_redacted_and_says_which_could_not_be_read(tmp_path: Any) -> None:
    c = BrokerControls()
    broker0 = LoggingContainer("[KafkaServer id=0] started\nsasl.jaas.config=org.Scram user=x password=y;\n")
    controller = LoggingContainer("controller up\n")
    c._containers = {0: broker0, 1: LoggingContainer(None), 100: controller}
    c._racks = {0: "rack1", 1: "rack2"}
    written = c.write_logs(tmp_path / "cluster", lines=50)
    assert sorted(p.name for p in written) == ["broker-0.log", "broker-1.log", "controller.log"]
    text = (tmp_path / "cluster" / "broker-0.log").read_text()
    assert "started" in text and "password=y" not in text and "[hidden]" in text
    assert "could not be read: APIError" in (tmp_path / "cluster" / "broker-1.log").read_text()
    assert (tmp_path / "cluster" / "controller.log").read_text() == "controller up\n"
    assert broker0.tails == [50]
    # logs read before (the soak reads them once, for its verdict and its report) are written as given
    again = c.write_logs(tmp_path / "again", logs={"broker-0": "as read\n"})
    assert [p.name for p in again] == ["broker-0.log"] and again[0].read_text() == "as read\n"
    assert broker0.tails == [50]
