"""Live proofs of :class:`kafka_placement.clients.confluent.Consumer` (librdkafka fetching, the
group run by kafka-python's coordinator with our assignors).

Workers are ``confluent_member.py`` subprocesses (SIGKILL-able); records are produced by a
confluent-kafka Producer in this process throughout, and the consumed (partition, offset) set is
compared with the producer's delivery reports.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from member_process import MemberProcess, create_ready_topic, wait_until

pytestmark = [pytest.mark.integration]

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
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="cf-live")
    try:
        return create_ready_topic(admin, "cf", PARTITIONS, 2)
    finally:
        admin.close()


@pytest.fixture()
def spawn(kafka_cluster: Any, tmp_path: Path) -> Any:
    started: list[Worker] = []

    def start(group: str, name: str, topic: str, strategy: str, **extra: Any) -> Worker:
        worker = Worker(kafka_cluster.bootstrap_servers, group, name, topic, strategy, tmp_path, **extra)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.close(timeout=15)


def _owner_is(owner: Worker, others: list[Worker], what: str, timeout: float) -> float:
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


def test_failover_priorities_kill_close_rejoin_no_loss(
    kafka_cluster: Any, topic: str, spawn: Any, request: pytest.FixtureRequest
) -> None:
    group = f"cf-failover-{uuid.uuid4().hex[:8]}"
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=5000, limit=100_000)
    p10 = spawn(group, "p10", topic, "failover", priority=10)
    request.addfinalizer(producer.stop)
    wait_until(lambda: p10.owned() == set(range(PARTITIONS)), 60, "p10 owning everything")
    p5 = spawn(group, "p5", topic, "failover", priority=5)
    p1 = spawn(group, "p1", topic, "failover", priority=1)
    wait_until(lambda: p5.last("assignment") and p1.last("assignment"), 60, "p5 and p1 in the group")
    _owner_is(p10, [p5, p1], "p10 alone consuming with p5 and p1 in the group", 60)
    time.sleep(2)  # records flow to p10 only
    assert p10.records() and not p5.records() and not p1.records()

    # SIGKILL the owner: the broker drops it after session.timeout.ms, p5 takes over
    killed_at = time.time()
    p10.kill()
    took = _owner_is(p5, [p1], "p5 owning everything after p10's SIGKILL", SESSION_TIMEOUT_S + 20) - killed_at
    assert took <= SESSION_TIMEOUT_S + 3, f"p5 took over {took:.1f}s after SIGKILL"
    time.sleep(2)

    # clean close: LeaveGroup at once, p1 takes over
    closed_at = time.time()
    p5.close()
    took_close = _owner_is(p1, [], "p1 owning everything after p5 closed", 20) - closed_at
    assert took_close <= 3.0, f"p1 took over {took_close:.1f}s after p5's close"
    time.sleep(2)

    # the highest priority comes back and takes everything back
    p10b = spawn(group, "p10b", topic, "failover", priority=10)
    back = _owner_is(p10b, [p1], "p10 (restarted) owning everything again", 60)
    assert max(p1.record_times(), default=0.0) < back, "p1 delivered records after p10 took over"
    time.sleep(2)

    producer.finish(240)  # 100k at 5k/s: 20 s on a quiet machine, far more at load average ~100
    assert producer.failed == 0 and len(producer.delivered) == 100_000
    produced = producer.delivered
    workers = [p10, p5, p1, p10b]

    def all_consumed() -> bool:
        return produced <= {r for w in workers for r in w.records()}

    wait_until(all_consumed, 60, f"{len(produced)} produced records consumed", step=0.5)
    consumed = [r for w in workers for r in w.records()]
    assert set(consumed) == produced, "records lost or invented"
    duplicates = len(consumed) - len(set(consumed))
    bound = sum(w.uncommitted_at_loss() for w in (p10, p5, p1))
    print(
        f"\nfailover: produced {len(produced)}, consumed {len(consumed)}, duplicates {duplicates} "
        f"(bound {bound}), SIGKILL takeover {took:.2f}s, close takeover {took_close:.2f}s"
    )
    assert duplicates <= bound
    refused = [e for w in workers for e in w.snapshot() if e["ev"] == "commit-refused"]
    assert not refused, refused
    _described_like_kafka_consumer_groups(
        kafka_cluster.bootstrap_servers, group, topic, {"p10b": set(range(PARTITIONS)), "p1": set()}
    )


def _described_like_kafka_consumer_groups(
    bootstrap: str, group: str, topic: str, expected: dict[str, set[int]], protocol: str = "failover"
) -> None:
    """What ``kafka-consumer-groups.sh --describe`` shows, through the same admin RPCs
    (DescribeGroups, OffsetFetch, ListOffsets): a Stable group with protocol ``failover``, each
    member (client id) with its partitions, and lag 0 once the owner committed everything."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    described = admin.describe_consumer_groups([group])[group].result()
    assert described.state.name == "STABLE" and described.partition_assignor == protocol
    members = {m.client_id: {tp.partition for tp in m.assignment.topic_partitions} for m in described.members}
    assert members == expected
    partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    ends = admin.list_offsets({tp: OffsetSpec.latest() for tp in partitions})
    end = {tp.partition: future.result().offset for tp, future in ends.items()}

    def lag() -> dict[int, int]:
        request = [ConsumerGroupTopicPartitions(group, partitions)]
        committed = admin.list_consumer_group_offsets(request)[group].result().topic_partitions
        return {tp.partition: end[tp.partition] - tp.offset for tp in committed}

    wait_until(lambda: not any(lag().values()), 20, f"lag 0 for group {group}")


def test_a_member_that_lost_its_membership_stops_delivering_and_its_commits_are_refused(
    kafka_cluster: Any, topic: str, spawn: Any, request: pytest.FixtureRequest
) -> None:
    """SIGSTOP the owner past the session timeout: the broker gives everything to the standby;
    after SIGCONT the old owner learns it lost the partitions (on_lost) before delivering one more
    record, its commit is refused, and it then rejoins and takes everything back (priority) within
    COMEBACK_BOUND_S of the SIGCONT."""
    group = f"cf-fenced-{uuid.uuid4().hex[:8]}"
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=2000, limit=30_000)
    request.addfinalizer(producer.stop)
    high = spawn(group, "high", topic, "failover", priority=10)
    wait_until(lambda: high.owned() == set(range(PARTITIONS)), 60, "high owning everything")
    low = spawn(group, "low", topic, "failover", priority=1)
    wait_until(lambda: low.last("assignment"), 60, "low in the group")
    _owner_is(high, [low], "high alone consuming", 60)
    wait_until(lambda: high.records(), 20, "high consuming")

    os.kill(high.proc.pid, signal.SIGSTOP)
    stopped_at = time.time()
    try:
        took = _owner_is(low, [], "low owning everything while high is stopped", SESSION_TIMEOUT_S + 20)
        assert took - stopped_at <= SESSION_TIMEOUT_S + 3
        time.sleep(1)
    finally:
        os.kill(high.proc.pid, signal.SIGCONT)
        resumed_at = time.time()
    try:
        lost = wait_until(
            lambda: next((e for e in high.snapshot() if e["ev"] == "lost" and e["t"] > stopped_at), None),
            20,
            "high's on_lost",
        )
    except AssertionError as exc:  # seen once in CI, with nothing on high's stderr: say what it was doing
        raise AssertionError(f"{exc}\n{high.diagnosis()}") from None
    assert set(lost["parts"]) == set(range(PARTITIONS))

    def refused_after_lost() -> bool:
        return any(e["ev"] == "commit-refused" and e["why"] == "after-lost" for e in high.snapshot())

    wait_until(refused_after_lost, 20, "high's commit after the loss refused")
    _owner_is(high, [low], "high owning everything again", 60)
    back_at = high.first_time_owning(set(range(PARTITIONS)), after=lost["t"])
    assert back_at is not None
    # the loss is seen at the first drive after SIGCONT (no heartbeat for a session); then one
    # rebalance as a new member, which waits for low's next heartbeat (≤ 3 s) and its rejoin
    assert back_at - resumed_at <= COMEBACK_BOUND_S, f"back {back_at - resumed_at:.1f}s after SIGCONT"
    # nothing delivered or committed between the stop and the loss (the partitions were low's already;
    # records librdkafka hands back to the wait the stop interrupted are dropped), nor committed
    # between the loss and the next assignment
    events = high.snapshot()
    reassigned_at = next(e["t"] for e in events if e["ev"] == "assign" and e["t"] > lost["t"])
    stale = [e for e in events if e["ev"] == "recs" and stopped_at < e["t"] < lost["t"]]
    assert not stale, f"{sum(len(e['items']) for e in stale)} records delivered after the session expired"
    stale_commits = [e for e in events if e["ev"] == "committed" and stopped_at < e["t"] < reassigned_at]
    assert not stale_commits, stale_commits
    print(
        f"\nfenced: standby took over {took - stopped_at:.2f}s after SIGSTOP; back owning everything "
        f"{back_at - resumed_at:.2f}s after SIGCONT; refused after SIGCONT: "
        f"{[(e['why'], e['error']) for e in high.snapshot() if e['ev'] == 'commit-refused']}"
    )
    producer.finish(60)
    produced = producer.delivered
    wait_until(lambda: produced <= set(high.records()) | set(low.records()), 60, "every record consumed")


def _double_owners(workers: list[Worker]) -> list[str]:
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


def test_cooperative_sticky_moves_only_what_the_joiner_takes(
    kafka_cluster: Any, topic: str, spawn: Any, request: pytest.FixtureRequest
) -> None:
    group = f"cf-coop-{uuid.uuid4().hex[:8]}"
    # records flow until both joins are done, however long the cluster takes
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=2000, limit=10**9)
    request.addfinalizer(producer.stop)
    a = spawn(group, "a", topic, "cooperative-sticky")
    wait_until(lambda: a.owned() == set(range(PARTITIONS)), 60, "a owning everything")
    members = [a]
    for joiner, sizes in (("b", [3, 3]), ("c", [2, 2, 2])):
        before = {w.name: w.owned() for w in members}
        joined_at = time.time()
        new = spawn(group, joiner, topic, "cooperative-sticky")
        members.append(new)

        def settled(members: list[Worker] = members, sizes: list[int] = sizes) -> bool:
            owned = [w.owned() for w in members]
            return sorted(map(len, owned)) == sizes and set().union(*owned) == set(range(PARTITIONS))

        wait_until(settled, 60, f"{joiner} joined: sizes {sizes}")
        settled_at = time.time()
        taken = new.owned()
        for w in members[:-1]:
            kept = w.owned()
            assert kept == before[w.name] - taken, f"{w.name} lost more than {joiner} took"
            revoked = {
                p for e in w.snapshot() if e["ev"] == "revoke" and e["t"] >= joined_at for p in e["parts"]
            }
            assert revoked == before[w.name] - kept, f"{w.name} revoked {revoked}"
            # it never stopped: records of the partitions it kept kept coming during the rebalance
            during = {
                p
                for e in w.snapshot()
                if e["ev"] == "recs" and joined_at <= e["t"] <= settled_at
                for p, _, _ in e["items"]
            }
            assert kept <= during, f"{w.name}: nothing from {sorted(kept - during)} while {joiner} joined"
            assert all(e["parts"] for e in w.snapshot() if e["ev"] == "assignment" and e["t"] >= joined_at)
        time.sleep(1)
    assert not _double_owners(members)
    producer.stop()
    assert producer.failed == 0
    produced = producer.delivered
    wait_until(lambda: produced <= {r for w in members for r in w.records()}, 60, "every record consumed")
    assert {r for w in members for r in w.records()} == produced


def test_auto_commit_static_member_and_rack_reach_the_group(
    kafka_cluster: Any, topic: str, spawn: Any, request: pytest.FixtureRequest
) -> None:
    """enable.auto.commit=true (implemented by the wrapper): lag 0 without a manual commit;
    group.instance.id and client.rack are in the member's JoinGroup (DescribeGroups shows them)."""
    from kafka import KafkaAdminClient

    group = f"cf-auto-{uuid.uuid4().hex[:8]}"
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=2000, limit=3000)
    request.addfinalizer(producer.stop)
    conf = {
        "enable.auto.commit": True,
        "auto.commit.interval.ms": 200,
        "group.instance.id": "static-a",
        "client.rack": "rack1",
    }
    member = spawn(group, "auto", topic, "range", conf=conf)
    producer.finish(60)
    wait_until(lambda: producer.delivered <= set(member.records()), 60, "every record consumed")
    _described_like_kafka_consumer_groups(
        kafka_cluster.bootstrap_servers, group, topic, {"auto": set(range(PARTITIONS))}, protocol="range"
    )
    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="cf-live")
    try:
        (described,) = admin.describe_groups([group]).values()
    finally:
        admin.close()
    (m,) = described["members"]
    assert m["group_instance_id"] == "static-a"
    meta = m["member_metadata"]
    rack = meta.get("rack_id") if isinstance(meta, dict) else getattr(meta, "rack_id", None)
    assert rack == "rack1"
    assert not [e for e in member.snapshot() if e["ev"] in ("committed", "commit-refused")]
