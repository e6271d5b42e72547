"""The soak's operation in flight: a throttled reassignment of the soak topic, planned by our planner and
executed by our own CLI, as an operator would run them (``reassign plan --remove-brokers`` drains one
broker of the topic, ``reassign apply --throttle`` moves it), while the load and the faults go on.

:class:`ThrottledReassignment` runs both commands in a thread (each in its own process, bounded in
time) and keeps their outcome; :meth:`ThrottledReassignment.check_copies` afterwards says whether the
move left every partition where the plan put it with every replica's copy whole (each replica's log as
large as its leader's, from ``DescribeLogDirs``, once the load has stopped). Whether the records
themselves are intact is the readback's part (:func:`~kafka_placement.soak.invariants.missing_from_topic`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["APPLY_TIMEOUT_S", "COPIES_TIMEOUT_S", "START_FRACTION", "THROTTLE", "ThrottledReassignment"]

#: The replication throttle (``--throttle``): above what the load writes into the moving partitions
#: (5 producers x 50 records/s of ~150 bytes), so the move ends, far below what the brokers could copy.
THROTTLE = "512KiB"
#: When the move starts, as a share of the load's duration.
START_FRACTION = 0.2
#: Bounds on the planner's run and on ``reassign apply`` (brokers killed meanwhile delay it).
PLAN_TIMEOUT_S = 180.0
PLAN_ATTEMPTS, PLAN_RETRY_S = 3, 20.0
APPLY_TIMEOUT_S = 900.0
#: ``reassign apply`` refused before submitting anything (a broker taking part was down: its throttle
#: could not be set, or — as Kafka's own tool says — it is an "Unknown broker id" while it is out of the
#: cluster's metadata; or no broker answered its connection) is run again, as an operator would, this
#: many times in all, this far apart. A cluster that stopped answering mid-way ("no broker answered") is
#: retried too: resubmitting the same plan is what Kafka's tool documents for changing its throttle.
APPLY_ATTEMPTS, APPLY_RETRY_S = 6, 20.0
NOT_SUBMITTED = (
    "nothing was submitted",
    "error: cannot connect to ",
    "error: Unknown broker id ",
    ": no broker answered within ",
)
#: How long the copies may take to become whole after the load (a broker restarted late catches up).
COPIES_TIMEOUT_S = 120.0


@dataclass
class ThrottledReassignment:
    """Drain ``broker`` of ``topic`` through ``kafka-placement reassign plan/apply`` (see the module
    docstring); ``outcome`` is the summary's ``reassignment`` entry."""

    workdir: Path
    bootstrap: str
    command_config: Path
    topic: str
    broker: int
    note: Callable[[str], None] = lambda _text: None
    outcome: dict[str, Any] = field(default_factory=dict)
    _thread: threading.Thread | None = None
    _proc: subprocess.Popen[str] | None = None
    _stopped: bool = False

    @property
    def plan_file(self) -> Path:
        return self.workdir / "reassignment-plan.json"

    def start(self, delay_s: float) -> None:
        self.outcome.update(
            {"topic": self.topic, "drained_broker": self.broker, "throttle": THROTTLE, "completed": False}
        )
        self._thread = threading.Thread(
            target=self._run, args=(delay_s,), name="soak-reassignment", daemon=True
        )
        self._thread.start()

    def join(self, timeout_s: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout_s)
            if self._thread.is_alive():
                self.outcome.setdefault(
                    "error", f"reassign apply still running {timeout_s:.0f}s after the load ended"
                )

    def stop(self) -> None:
        """End the command under way (a run aborted by an error)."""
        self._stopped = True
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def _cli(self, *argv: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
        if self._stopped:
            raise OSError("the soak run was stopped")
        command = [
            sys.executable,
            "-m",
            "kafka_placement.cli",
            "reassign",
            *argv,
            "--bootstrap-server",
            self.bootstrap,
            "--command-config",
            str(self.command_config),
        ]
        with subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as proc:
            self._proc = proc
            try:
                out, err = proc.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise
            finally:
                self._proc = None
        return subprocess.CompletedProcess(command, proc.returncode, out, err)

    def _until_done(
        self,
        argv: tuple[str, ...],
        attempts: int,
        pause_s: float,
        timeout_s: float,
        again: Callable[[subprocess.CompletedProcess[str]], bool],
    ) -> bool:
        """Run ``reassign *argv`` until it exits 0, at most ``attempts`` times, ``pause_s`` apart, while
        ``again(result)`` says the failure is one to retry; the last failure is the outcome's ``error``."""
        for attempt in range(1, attempts + 1):
            result = self._cli(*argv, timeout_s=timeout_s)
            self.outcome[f"{argv[0]}_exit"] = result.returncode
            if result.returncode == 0:
                self.outcome.pop("error", None)
                return True
            self.outcome["error"] = f"reassign {argv[0]} exited {result.returncode}: {_last_line(result)}"
            if attempt == attempts or not again(result):
                return False
            self.outcome[f"{argv[0]}_retries"] = attempt
            self.note(f"reassignment: {argv[0]} failed (exit {result.returncode}); again in {pause_s:.0f}s")
            time.sleep(pause_s)
        return False

    def _run(self, delay_s: float) -> None:
        time.sleep(max(0.0, delay_s))
        plan = self.plan_file
        try:
            self.outcome["started_t"] = round(time.time(), 3)
            self.note(f"reassignment: planning the drain of broker {self.broker}")
            # any failed plan (a broker down for a fault) is planned again after it
            if not self._until_done(
                (
                    "plan",
                    "--topic",
                    self.topic,
                    "--remove-brokers",
                    str(self.broker),
                    "--output",
                    str(plan),
                    "--rollback",
                    str(self.workdir / "reassignment-rollback.json"),
                ),
                PLAN_ATTEMPTS,
                PLAN_RETRY_S,
                PLAN_TIMEOUT_S,
                again=lambda _r: True,
            ):
                return
            moves = json.loads(plan.read_text())["partitions"]
            self.outcome["target"] = {str(m["partition"]): list(m["replicas"]) for m in moves}
            self.outcome["partitions_moved"] = len(moves)
            self.note(
                f"reassignment: moving {len(moves)} partitions off broker {self.broker}, "
                f"throttled to {THROTTLE}/s"
            )
            # a broker of the plan down for a fault (its throttle not set, or not in the metadata), or no
            # broker answering the connection: nothing was submitted, so the operator runs it again later
            if not self._until_done(
                (
                    "apply",
                    "--plan",
                    str(plan),
                    "--throttle",
                    THROTTLE,
                    "--timeout",
                    str(int(APPLY_TIMEOUT_S)),
                ),
                APPLY_ATTEMPTS,
                APPLY_RETRY_S,
                APPLY_TIMEOUT_S + 120.0,
                again=lambda r: any(t in r.stderr for t in NOT_SUBMITTED),
            ):
                return
            self.outcome["completed"] = True
            self.outcome["completed_t"] = round(time.time(), 3)
            self.outcome["seconds"] = round(self.outcome["completed_t"] - self.outcome["started_t"], 1)
            self.note(f"reassignment: done in {self.outcome['seconds']}s")
        except (OSError, ValueError, KeyError, subprocess.TimeoutExpired) as exc:
            self.outcome["error"] = f"{type(exc).__name__}: {exc}"

    def check_copies(self, admin: Any) -> None:
        """After the load: each partition's replicas are the plan's, and each replica's log is as large
        as its leader's (waited for up to ``COPIES_TIMEOUT_S``); recorded in ``outcome``."""
        from kafka_placement.clients.kafka_python.reassignment import replica_dirs

        target: dict[str, list[int]] = self.outcome.get("target") or {}
        if not self.outcome.get("completed"):
            return
        deadline = time.monotonic() + COPIES_TIMEOUT_S
        while True:
            problems = _copy_problems(admin, self.topic, target, replica_dirs)
            if not problems or time.monotonic() > deadline:
                break
            time.sleep(2.0)
        self.outcome["copies_whole"] = not problems
        self.outcome["copy_problems"] = problems[:20]
        self.outcome["throttles_left"] = self._throttles_left(admin)

    def _throttles_left(self, admin: Any) -> list[str]:
        """The throttle configs still set after the move; when ``apply`` could not clear them (a broker
        down at its end: "run verify later"), ``reassign verify`` is run first, as the operator would."""
        from kafka_placement.clients.kafka_python import admin as kp_admin
        from kafka_placement.clients.kafka_python import reassignment as kp

        def left() -> list[str]:
            brokers = [b.id for b in kp.retrying(admin, lambda: kp_admin.brokers(admin))]
            found = kp.throttles(admin, brokers, [self.topic])
            return (
                [f"broker {b}: {sorted(c)}" for b, c in sorted(found.brokers.items())]
                + [f"topic {t}: {sorted(c)}" for t, c in sorted(found.topics.items())]
                + [f"broker {b}: unreachable" for b in found.unreachable]
            )

        remaining: list[str] = []
        try:
            remaining = left()
            if remaining:
                verified = self._cli("verify", "--plan", str(self.plan_file), timeout_s=PLAN_TIMEOUT_S)
                self.outcome["verify_exit"] = verified.returncode
                remaining = left()
        except Exception as exc:  # kafka-python's errors, the command's timeout: reported, judged
            remaining = [*remaining, f"not checked: {type(exc).__name__}: {exc}"]
        return remaining


def _copy_problems(
    admin: Any, topic: str, target: dict[str, list[int]], replica_dirs: Callable[[Any, list[str]], Any]
) -> list[str]:
    from kafka_placement.clients.kafka_python.admin import snapshot

    try:
        partitions = snapshot(admin, [topic]).partitions
        sizes = {(tp.partition, broker): d.size for (tp, broker), d in replica_dirs(admin, [topic]).items()}
    except Exception as exc:  # kafka-python's errors: a cluster still recovering, asked again
        return [f"cluster not answering: {type(exc).__name__}"]
    problems = []
    for tp, state in sorted(partitions.items()):
        partition, replicas, leader = tp.partition, list(state.replicas), state.leader
        wanted = target.get(str(partition))
        if wanted is not None and sorted(replicas) != sorted(wanted):
            problems.append(f"partition {partition}: replicas {replicas}, the plan said {wanted}")
            continue
        if leader is None or (partition, leader) not in sizes:
            problems.append(f"partition {partition}: no leader answering")
            continue
        short = [b for b in replicas if sizes.get((partition, b)) != sizes[(partition, leader)]]
        if short:
            problems.append(
                f"partition {partition}: replicas {short} differ from leader {leader}'s "
                f"{sizes[(partition, leader)]} bytes"
            )
    return problems


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (result.stderr or result.stdout or "").splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"
