"""The soak's Java member (``soak/java/.../SoakMember.java``) replaces a consumer that failed for good, live.

A consumer-protocol ``KafkaConsumer`` joining a classic failover group that has a member is refused
GROUP_ID_NOT_FOUND (the broker will not convert the group: ``test_mixed_protocol_live.py``), a fatal
error: Java's consumer throws it out of ``poll()`` once and then stays fenced. The soak's Java member
must not hang on such a consumer, nor die: it logs a session lost, closes the consumer and subscribes a
new one, saying so on stderr. Once the classic member leaves, the group is empty and the next replacement
joins it and owns every partition. Before the fix the member process ended with the exception.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.soak.java_member import class_path, java_command, member_properties
from live_group import Worker
from member_process import create_ready_topic, wait_until

pytestmark = [pytest.mark.integration]

PARTITIONS = 6
SESSION_MS = 15_000
REPLACED = "the consumer failed for good"


def _events(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _owned_now(log: Path) -> set[int]:
    """The partitions of the member's open ownership interval (none when its last one is released)."""
    owns = [e for e in _events(log) if e["ev"] == "own"]
    last = owns[-1] if owns else None
    return set(last["partitions"]) if last is not None and last["released"] is None else set()


def test_the_soak_java_member_replaces_a_consumer_refused_for_good_and_the_replacement_joins(
    kafka_cluster: Any, tmp_path: Path
) -> None:
    from kafka import KafkaAdminClient

    bootstrap = kafka_cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="soak-java-fatal")
    try:
        topic = create_ready_topic(admin, "soak-java-fatal", PARTITIONS, 2)
    finally:
        admin.close()
    group = f"soak-java-fatal-{uuid.uuid4().hex[:8]}"
    classic = Worker(bootstrap, group, "classic-p10", [topic], "failover", str(tmp_path), priority=10)
    properties, log = tmp_path / "cp-java.properties", tmp_path / "cp-java.jsonl"
    stderr_path = tmp_path / "cp-java.err"
    properties.write_text(member_properties("java-consumer", 20, kafka_cluster.client_settings(), SESSION_MS))
    java: subprocess.Popen[bytes] | None = None
    try:
        everything = set(range(PARTITIONS))
        wait_until(lambda: {p for _, p in classic.assignment()} == everything, 90, "p10 owning everything")
        with stderr_path.open("wb") as stderr:
            java = subprocess.Popen(
                java_command(class_path(), properties, group, "cp-java", topic, log, SESSION_MS),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )

        def replacements() -> int:
            return stderr_path.read_text(errors="replace").count(REPLACED)

        def said() -> str:
            return stderr_path.read_text(errors="replace")[-3000:]

        wait_until(lambda: replacements() >= 2 or java.poll() is not None, 120, "two replacements")
        assert java.poll() is None, f"the Java member ended (exit {java.returncode}): {said()}"
        assert replacements() >= 2, said()
        assert "does not exist" in said() or "GroupIdNotFound" in said(), said()
        lost = [e for e in _events(log) if e["ev"] == "session-lost"]
        assert len(lost) >= 2 and all(e["t"] - e["since"] == pytest.approx(SESSION_MS / 1000) for e in lost)
        assert _owned_now(log) == set(), "a refused member owned partitions"
        assert {p for _, p in classic.assignment()} == everything  # the classic member kept all

        classic.close(timeout=15)  # the group is empty now: the next replacement joins it
        wait_until(lambda: _owned_now(log) == everything, 90, "a replacement owning every partition")
        assert java.poll() is None, said()

        assert java.stdin is not None
        java.stdin.write(b"close\n")
        java.stdin.flush()
        started = time.monotonic()
        assert java.wait(timeout=60) == 0, said()
        assert time.monotonic() - started < 60
        assert _owned_now(log) == set()  # released at the close
    finally:
        if java is not None and java.poll() is None:
            java.kill()
            java.wait()
        if classic.alive():
            classic.kill()
