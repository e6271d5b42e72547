"""Reading the run's logs: a killed member's torn last line is skipped; an ownership written at acquisition
and again at release is one holding."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import kafka.admin
import pytest

import kafka_placement.testing.topics as topics
from kafka_placement.soak.events import Ownership, dump_event
from kafka_placement.soak.rig import client_log, kafka_python_log
from kafka_placement.soak.runner import read_logs, run_soak


def test_torn_last_line_and_acquire_release_pairs(tmp_path: Path) -> None:
    held = Ownership("g", "a", 1, (0,), 1.0, None)
    released = Ownership("g", "a", 1, (0,), 1.0, 3.0)
    again = Ownership("g", "a", 2, (0, 1), 3.0, None)
    lines = [dump_event(held), dump_event(released), dump_event(again), '{"ev": "consumed", "gro']
    (tmp_path / "member-a.jsonl").write_text("\n".join(lines))
    (tmp_path / "runner.jsonl").write_text("")
    logs = read_logs(tmp_path)
    assert sorted(logs.ownerships, key=lambda o: o.generation) == [released, again]
    assert logs.consumed == []


def test_a_member_process_that_ends_on_its_own_is_logged_stopped_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    from kafka_placement.soak.events import Event, Life
    from kafka_placement.soak.members import Members

    events: list[Event] = []
    members = Members(tmp_path, "t", {}, 6000, "px", events.append)
    crashed = subprocess.Popen(
        [sys.executable, "-c", "raise SystemExit(3)"], stdin=subprocess.PIPE, text=True
    )
    crashed.wait(30)
    members.procs["kp-high"] = crashed
    members.watch()
    members.watch()  # logged once
    assert [(name, code) for name, _t, code in members.exits] == [("kp-high", 3)]
    assert [(e.member, e.up) for e in events if isinstance(e, Life)] == [("kp-high", False)]
    members.close_all(timeout_s=5)
    assert [(e.member, e.up) for e in events if isinstance(e, Life)] == [("kp-high", False)]


def test_a_run_refused_before_the_load_closes_what_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A topic the cluster refuses ends the run before any load: the admin client and the run's log
    are closed, and no librdkafka log handler or named logger is left in the process."""
    closed: list[str] = []

    class FakeAdmin:
        def __init__(self, **_kw: object) -> None:
            self._manager = SimpleNamespace(_build_transport=None)  # what the TLS handshake bound wraps

        def close(self) -> None:
            closed.append("admin")

    def refused(*_a: object, **_kw: object) -> None:
        raise RuntimeError("topic refused")

    class FakeCluster:
        broker_ids = (0, 1, 2)

        def kafka_python_settings(self) -> dict[str, object]:
            return {"bootstrap_servers": "127.0.0.1:1"}

        def librdkafka_settings(self) -> dict[str, object]:
            return {"bootstrap.servers": "127.0.0.1:1"}

    monkeypatch.setattr(kafka.admin, "KafkaAdminClient", FakeAdmin)
    monkeypatch.setattr(topics, "create_topic", refused)
    loggers_before = set(logging.root.manager.loggerDict)
    with pytest.raises(RuntimeError, match="topic refused"):
        run_soak(FakeCluster(), minutes=1, seed=1, profile_name="quick", workdir=tmp_path)
    assert closed == ["admin"]
    assert set(logging.root.manager.loggerDict) == loggers_before
    with open(tmp_path / "runner.jsonl") as f:  # written and closed (nothing buffered)
        assert f.read() == ""


def test_the_client_log_leaves_nothing_behind(tmp_path: Path) -> None:
    with client_log(tmp_path) as log:
        log.warning("disconnected")
        handler = log.handlers[0]
    assert log.handlers == [] and handler.stream is None  # type: ignore[attr-defined]
    assert log.name not in logging.root.manager.loggerDict
    assert "disconnected" in (tmp_path / "librdkafka.log").read_text()


def test_kafka_pythons_log_goes_to_a_file_for_the_run_and_is_restored(tmp_path: Path) -> None:
    kafka_log = logging.getLogger("kafka")
    before = (kafka_log.level, kafka_log.propagate, list(kafka_log.handlers))
    with kafka_python_log(tmp_path):
        logging.getLogger("kafka.producer.sender").info("Uncaught error in kafka producer I/O thread")
        logging.getLogger("kafka.producer.sender").debug("not kept: below INFO")
    assert (kafka_log.level, kafka_log.propagate, list(kafka_log.handlers)) == before
    text = (tmp_path / "kafka-python.log").read_text()
    assert "Uncaught error in kafka producer I/O thread" in text and "not kept" not in text


def test_aiokafkas_log_joins_it_and_is_restored(tmp_path: Path) -> None:
    aio_log = logging.getLogger("aiokafka")
    before = (aio_log.level, aio_log.propagate, list(aio_log.handlers))
    with kafka_python_log(tmp_path, also=("aiokafka",)):
        logging.getLogger("aiokafka.producer.sender").warning("Got error produce response: connection closed")
    assert (aio_log.level, aio_log.propagate, list(aio_log.handlers)) == before
    assert "Got error produce response" in (tmp_path / "kafka-python.log").read_text()
