"""The confluent ``Consumer`` live tests' members and load: ``confluent_member.py`` worker processes
(SIGKILL-able, SIGSTOP-able), a keyed producer whose delivery reports give the produced set, and the
``topic`` and ``spawn`` fixtures both confluent live modules import."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from member_process import MemberProcess, create_ready_topic, wait_until

PARTITIONS = 6
SESSION_TIMEOUT_S = 6.0
#: A member paused (SIGSTOP) past its session owns its partitions again within this many seconds of
#: SIGCONT (measured 0.97-1.09 s in four runs; the bound leaves room for a loaded 2-core machine).
COMEBACK_BOUND_S = 10.0
WORKER = str(Path(__file__).with_name("confluent_member.py"))


class Worker(MemberProcess):
    def __init__(
        self, bootstrap: str, group: str, name: str, topic: str, strategy: str, log_dir: Path, **extra: Any
    ) -> None:
        self.name = name
        config = {
            "bootstrap": bootstrap,
            "group": group,
            "name": name,
            "topics": [topic],
            "strategy": strategy,
            "session_timeout_ms": int(SESSION_TIMEOUT_S * 1000),
            **extra,
        }
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix=f"cf-{name}-", suffix=".log", delete=False, dir=log_dir
        )
        super().__init__([sys.executable, WORKER, json.dumps(config)], stderr=self.log)

    def diagnosis(self) -> str:
        """For a member that did not do what a test waited for: its process state (/proc: S sleeping,
        R running, T stopped), every thread's stack (SIGUSR1: faulthandler in the member), its last
        events and the end of its stderr."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            state = f"exited {self.proc.poll()}"
        if self.alive():
            os.kill(self.proc.pid, signal.SIGUSR1)
            time.sleep(1.0)
        with open(self.log.name, errors="replace") as err:
            stderr = "".join(line for line in err.readlines() if not line.startswith("%"))[-6000:]
        return (
            f"{self.name}: process state {state}; last events {self.snapshot()[-8:]}\n"
            f"--- {self.name} stderr (end) ---\n{stderr}"
        )

    def owned(self) -> set[int]:
        event = self.last("assignment")
        return set(event["parts"]) if event else set()

    def first_time_owning(self, parts: set[int], after: float = 0.0) -> float | None:
        return next(
            (
                e["t"]
                for e in self.snapshot()
                if e["ev"] == "assignment" and set(e["parts"]) == parts and e["t"] >= after
            ),
            None,
        )

    def records(self) -> list[tuple[int, int]]:
        return [(p, o) for e in self.snapshot() if e["ev"] == "recs" for p, o, _ in e["items"]]

    def record_times(self) -> list[float]:
        return [e["t"] for e in self.snapshot() if e["ev"] == "recs"]

    def uncommitted_at_loss(self) -> int:
        """Records delivered after the worker's last successful commit, summed over every moment
        it gave partitions up (revoke, lost, killed): what another member may see again."""
        total = since = 0
        for e in self.snapshot():
            if e["ev"] == "recs":
                since += len(e["items"])
            elif e["ev"] == "committed":
                since = 0
            elif e["ev"] in ("revoke", "lost") and e["parts"]:
                total += since
                since = 0
        return total + since

    def log_tail(self, lines: int = 20) -> str:
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-lines:])


class KeyedProducer:
    """Keyed records at a steady rate on a thread; delivery reports give the produced set."""

    def __init__(self, bootstrap: str, topic: str, rate_per_s: int, limit: int) -> None:
        from confluent_kafka import Producer

        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
        self.topic, self.rate, self.limit = topic, rate_per_s, limit
        self.delivered: set[tuple[int, int]] = set()
        self.failed = 0
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _report(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.failed += 1
        else:
            self.delivered.add((msg.partition(), msg.offset()))

    def _run(self) -> None:
        batch = max(1, self.rate // 20)
        while not self._stop.is_set() and self.sent < self.limit:
            for _ in range(min(batch, self.limit - self.sent)):
                self.producer.produce(
                    self.topic, key=f"k{self.sent}".encode(), value=b"v", on_delivery=self._report
                )
                self.sent += 1
            self.producer.poll(0)
            time.sleep(0.05)
        # every delivery report in, else `delivered` misses records the broker has (and the
        # consumers read): on a loaded machine one flush(30) was not always enough
        deadline = time.monotonic() + 180
        while self.producer.flush(5) and time.monotonic() < deadline:
            pass

    def finish(self, timeout: float) -> None:
        """Wait until all ``limit`` records are sent and delivered."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"producer sent only {self.sent} records in time"

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)


@pytest.fixture()
def topic(kafka_cluster: Any) -> str:
    """A fresh topic of PARTITIONS partitions, replication 2, every partition led."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="cf-live")
    try:
        return create_ready_topic(admin, "cf", PARTITIONS, 2)
    finally:
        admin.close()


@pytest.fixture()
def spawn(kafka_cluster: Any, tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """``spawn(group, name, topic, strategy, **extra)`` starts a Worker; every one started is closed
    at the end."""
    started: list[Worker] = []

    def start(group: str, name: str, topic: str, strategy: str, **extra: Any) -> Worker:
        worker = Worker(kafka_cluster.bootstrap_servers, group, name, topic, strategy, tmp_path, **extra)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.close(timeout=15)


def owner_is(owner: Worker, others: list[Worker], what: str, timeout: float) -> float:
    everything = set(range(PARTITIONS))

    def settled() -> bool:
        return owner.owned() == everything and all(not w.alive() or not w.owned() for w in others)

    try:
        wait_until(settled, timeout, what)
    except AssertionError:
        details = {w.name: (sorted(w.owned()), w.alive(), w.log_tail(8)) for w in [owner, *others]}
        raise AssertionError(f"{what}: {json.dumps(details, indent=1)}") from None
    t = owner.first_time_owning(everything)
    assert t is not None
    return float(t)


def double_owners(workers: list[Worker]) -> list[str]:
    """Replay every member's assignment changes in time order: a partition never has two owners."""
    timeline = sorted(
        (e["t"], w.name, set(e["parts"])) for w in workers for e in w.snapshot() if e["ev"] == "assignment"
    )
    owned: dict[str, set[int]] = {}
    problems = []
    for t, name, parts in timeline:
        owned[name] = parts
        for other, theirs in owned.items():
            if other != name and parts & theirs:
                problems.append(f"{t:.3f}: {name} and {other} both own {sorted(parts & theirs)}")
    return problems
