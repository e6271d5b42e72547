"""The demo's failover step: three group members in child processes with the failover assignor; the
active one is killed and the takeover timed. ``python -m kafka_placement.cli.failover_member CONFIG TOPIC
GROUP PRIORITY TIMEOUT_MS`` is one member (internal: the connection comes in a private properties file,
never on the command line)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_placement.clients.connection import ConnectionSettings
from kafka_placement.errors import ClusterError

PRIORITIES = (30, 20, 10)


def member_command(config: str, topic: str, group: str, priority: int, timeout_ms: int) -> list[str]:
    """``config``: a private Java client .properties file with the connection (secrets never on argv)."""
    return [
        sys.executable,
        "-m",
        "kafka_placement.cli.failover_member",
        config,
        topic,
        group,
        str(priority),
        str(timeout_ms),
    ]


def member_main(argv: list[str]) -> int:
    """One failover group member (a child process): prints its assignments as JSON lines."""
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    from kafka_placement.clients.kafka_python import FailoverAssignor, KafkaConsumer

    config, topic, group, priority, timeout_ms = argv[0], argv[1], argv[2], int(argv[3]), int(argv[4])
    from kafka_placement.clients.connection import connection_settings

    settings = connection_settings(command_config=config)

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        def on_partitions_revoked(self, revoked: Any) -> None:
            pass

        def on_partitions_assigned(self, assigned: Any) -> None:
            parts = sorted(tp.partition for tp in assigned)
            print(json.dumps({"priority": priority, "assigned": parts}), flush=True)

    consumer = KafkaConsumer(
        **settings.kafka_python(),
        group_id=group,
        client_id=f"failover-p{priority}",
        partition_assignment_strategy=[FailoverAssignor(priority=priority)],
        session_timeout_ms=timeout_ms,
        heartbeat_interval_ms=max(100, timeout_ms // 6),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    consumer.subscribe([topic], listener=Listener())
    consumed = 0
    while True:
        for batch in consumer.poll(timeout_ms=500).values():
            consumed += len(batch)
        print(json.dumps({"priority": priority, "consumed": consumed}), flush=True)


def run_failover(
    bootstrap: ConnectionSettings, topic: str, partitions: int, timeout_ms: int
) -> dict[str, float]:
    """Start 3 members, wait for the highest priority to own everything, SIGKILL it, time the takeover."""
    group = f"kp-demo-failover-{uuid.uuid4().hex[:6]}"
    events: queue.Queue[dict[str, Any]] = queue.Queue()
    procs: dict[int, subprocess.Popen[str]] = {}

    def pump(proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with contextlib.suppress(ValueError):
                events.put(json.loads(line))

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    private = Path(tempfile.mkdtemp(prefix="kp-demo-"))
    config = str(bootstrap.write_properties(private / "client.properties"))
    for prio in PRIORITIES:
        procs[prio] = subprocess.Popen(
            member_command(config, topic, group, prio, timeout_ms),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        threading.Thread(target=pump, args=(procs[prio],), daemon=True).start()
    owned: dict[int, list[int]] = {}
    consumed: dict[int, int] = {}

    def wait_for(check: Callable[[], bool], seconds: float, what: str) -> float:
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            try:
                event = events.get(timeout=0.5)
            except queue.Empty:
                continue
            if "assigned" in event and owned.get(event["priority"]) != event["assigned"]:
                owned[event["priority"]] = event["assigned"]
                print(
                    f"  member priority {event['priority']}: {len(event['assigned'])} partition(s)",
                    flush=True,
                )
            if "consumed" in event:
                consumed[event["priority"]] = event["consumed"]
            if check():
                return time.monotonic() - started
        raise ClusterError(
            f"failover group: timed out after {seconds:.0f}s waiting for {what} (owned: {owned})"
        )

    top, second = PRIORITIES[0], PRIORITIES[1]
    everything = list(range(partitions))
    try:
        wait_for(
            lambda: (
                owned.get(top) == everything
                and all(not owned.get(p) for p in PRIORITIES[1:])
                and len(owned) == len(PRIORITIES)
            ),
            90,
            f"priority {top} to own all {partitions} partitions",
        )
        wait_for(lambda: consumed.get(top, 0) > 0, 30, f"priority {top} to consume")
        print(
            f"  active: priority {top} owns all {partitions} partitions, consumed {consumed.get(top, 0):,} "
            "records; standbys idle",
            flush=True,
        )
        print(f"  SIGKILL the active member (pid {procs[top].pid}) …", flush=True)
        procs[top].send_signal(signal.SIGKILL)
        killed = time.monotonic()
        wait_for(lambda: owned.get(second) == everything, 90, f"priority {second} to take over")
        takeover = time.monotonic() - killed
        print(
            f"  takeover: priority {second} owns all {partitions} partitions {takeover:.1f}s after the kill "
            f"(session timeout {timeout_ms / 1000:.1f}s)",
            flush=True,
        )
        return {"takeover_seconds": takeover}
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(private, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 6:
        sys.exit(member_main(sys.argv[1:]))
    sys.exit(
        "usage: python -m kafka_placement.cli.failover_member CONFIG TOPIC GROUP PRIORITY TIMEOUT_MS"
        " (internal)"
    )
