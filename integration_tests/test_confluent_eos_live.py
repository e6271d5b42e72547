"""Live: exactly-once consume-transform-produce with a failover group (issue 30).

Two ``confluent_eos_member.py`` processes (our confluent ``Consumer`` with ``FailoverAssignor``,
a transactional confluent ``Producer`` each, one transaction per batch, offsets sent with
``Consumer.consumer_group_metadata()``). The active one is SIGSTOPped in the middle of a
transaction, past its session; the standby takes over; the old one is SIGCONTed and sends its
offsets with the generation it had. Expected values come from the broker: its refusal, and the
output topic read with ``isolation.level=read_committed`` by a plain confluent consumer. The
control: the same offsets sent with the metadata of librdkafka's own (never joined) consumer handle
are accepted by the broker and move the group's offsets back — the fencing is the generation and
member id our metadata carries.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from member_process import MemberProcess, create_ready_topic, wait_until

pytestmark = [pytest.mark.integration]

PARTITIONS = 6
RECORDS = 2000
SESSION_TIMEOUT_S = 6.0
MEMBER = str(Path(__file__).with_name("confluent_eos_member.py"))


class EosMember(MemberProcess):
    def __init__(self, config: dict[str, Any], log_dir: Path) -> None:
        self.name = config["name"]
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix=f"eos-{self.name}-", suffix=".log", delete=False, dir=log_dir
        )
        super().__init__([sys.executable, MEMBER, json.dumps(config)], stderr=self.log)

    def owned(self) -> set[int]:
        event = self.last("assignment")
        return set(event["parts"]) if event else set()

    def committed(self) -> dict[int, int]:
        """Input offsets this member's committed transactions carried (partition -> next offset)."""
        done: dict[int, int] = {}
        for e in self.snapshot():
            if e["ev"] == "txn-committed":
                done.update({p: o for p, o in e["offsets"]})
        return done

    def log_tail(self, lines: int = 15) -> str:
        with open(self.log.name, errors="replace") as f:
            return "".join(line for line in f.readlines()[-lines:] if not line.startswith("%"))

    def summary(self) -> str:
        events = self.snapshot()
        counts = Counter(e["ev"] for e in events)
        return f"{self.name}: {dict(counts)}; last {events[-4:]}; stderr {self.log_tail(6)!r}"


def _wait(predicate: Any, timeout: float, what: str, members: list[EosMember]) -> Any:
    """``wait_until``, failing with what every member reported (events, stderr)."""
    try:
        return wait_until(predicate, timeout, what)
    except AssertionError as exc:
        raise AssertionError("\n".join([str(exc), *(m.summary() for m in members)])) from None


def _topics(bootstrap: str) -> tuple[str, str]:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="eos-live")
    try:
        return (
            create_ready_topic(admin, "eos-in", PARTITIONS, 3),
            create_ready_topic(admin, "eos-out", PARTITIONS, 3),
        )
    finally:
        admin.close()


def _read_output(bootstrap: str, topic: str, isolation: str) -> list[str]:
    """Every value of ``topic`` a plain confluent consumer with ``isolation.level=isolation``
    reads, up to the end of each partition (the last stable offset: every transaction resolved)."""
    import confluent_kafka

    reader = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "isolation.level": isolation,
            "group.id": f"eos-reader-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
        }
    )
    try:
        begin = confluent_kafka.OFFSET_BEGINNING
        tps = [confluent_kafka.TopicPartition(topic, p, begin) for p in range(PARTITIONS)]
        high = {tp.partition: reader.get_watermark_offsets(tp, timeout=30)[1] for tp in tps}
        reader.assign(tps)
        values: list[str] = []

        def at_end() -> bool:
            for msg in reader.consume(1000, 0.5):
                if msg.error() is None:
                    values.append(msg.value().decode())
            positions = {tp.partition: tp.offset for tp in reader.position(tps)}
            return all(high[p] == 0 or positions[p] >= high[p] for p in high)

        wait_until(at_end, 60, f"the output read to its end ({isolation})", step=0)
    finally:
        reader.close()
    return values


def _group_offsets(bootstrap: str, group: str, topic: str, partitions: dict[int, int]) -> dict[int, int]:
    """The group's committed offsets of ``partitions``, read by a plain confluent consumer."""
    import confluent_kafka

    reader = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        tps = [confluent_kafka.TopicPartition(topic, p) for p in partitions]
        return {tp.partition: tp.offset for tp in reader.committed(tps, timeout=30)}
    finally:
        reader.close()


def test_a_fenced_members_transaction_is_refused_and_the_output_holds_every_record_once(
    kafka_cluster: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from confluent_kafka import Producer

    bootstrap = kafka_cluster.bootstrap_servers
    source, sink = _topics(bootstrap)
    group = f"eos-{uuid.uuid4().hex[:8]}"
    members: list[EosMember] = []

    def start(name: str, priority: int, **extra: Any) -> EosMember:
        member = EosMember(
            {
                "bootstrap": bootstrap,
                "group": group,
                "name": name,
                "input": source,
                "output": sink,
                "priority": priority,
                "transactional_id": f"{group}-{name}",
                "session_timeout_ms": int(SESSION_TIMEOUT_S * 1000),
                **extra,
            },
            tmp_path,
        )
        members.append(member)
        return member

    def cleanup() -> None:
        for m in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(m.proc.pid, signal.SIGCONT)
            m.close(timeout=20)

    request.addfinalizer(cleanup)
    active = start("p10", 10, pause_at_batch=3, then_unfenced=True)
    wait_until(lambda: active.owned() == set(range(PARTITIONS)), 60, "p10 owning every partition")
    standby = start("p5", 5)
    wait_until(
        lambda: standby.last("assignment") is not None and active.owned() == set(range(PARTITIONS)),
        60,
        "p5 in the group, p10 still owning everything",
    )

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    delivered: set[tuple[int, int]] = set()

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            delivered.add((msg.partition(), msg.offset()))

    for i in range(RECORDS):
        producer.produce(source, key=f"k{i}".encode(), value=b"v", on_delivery=on_delivery)
    assert producer.flush(60) == 0 and len(delivered) == RECORDS
    high = {p: 1 + max(o for q, o in delivered if q == p) for p in {q for q, _ in delivered}}

    pause = _wait(lambda: active.last("pause-point"), 60, "p10 in its third transaction", members)
    assert pause["records"] > 0 and pause["generation"] >= 1 and pause["member_id"]
    assert (pause["generation"], pause["member_id"]) == (
        pause["coordinator_generation"],
        pause["coordinator_member_id"],
    )
    os.kill(active.proc.pid, signal.SIGSTOP)  # a long GC pause, with its transaction open
    try:
        _wait(
            lambda: standby.owned() == set(range(PARTITIONS)),
            SESSION_TIMEOUT_S + 30,
            "p5 owning every partition after p10 stopped",
            members,
        )
        _wait(
            lambda: {**active.committed(), **standby.committed()} == high,
            180,
            "p5 through every input record",
            members,
        )
    finally:
        os.kill(active.proc.pid, signal.SIGCONT)
    active.send("go")
    outcome = _wait(
        lambda: next((e for e in active.snapshot() if e["ev"] in ("refused", "committed-after-pause")), None),
        60,
        "p10's transaction answered",
        members,
    )
    print(f"\nzombie p10 (generation {pause['generation']}) sending its offsets: {json.dumps(outcome)}")
    assert outcome["ev"] == "refused", active.log_tail()
    assert outcome["code"] in ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"), outcome
    wait_until(lambda: active.last("aborted") or active.last("abort-failed"), 60, "p10's abort")
    assert active.last("aborted") is not None, active.snapshot()[-3:]
    # the control: the same offsets with the metadata librdkafka's own handle gives (it never
    # joined: generation -1, no member id) are accepted though the group has a member, and move
    # the group's committed offsets back — what the generation and member id carried prevent
    control = wait_until(lambda: active.last("unfenced"), 60, "p10's control transaction answered")
    assert control["generation"] == -1 and control["accepted"] is True, control
    zombie_offsets = {p: o for p, o in pause["offsets"]}
    assert _group_offsets(bootstrap, group, source, zombie_offsets) == zombie_offsets
    assert all(o < high[p] for p, o in zombie_offsets.items())
    takeover = [e for e in standby.snapshot() if e["ev"] == "txn-committed"]
    assert takeover and all(e["generation"] > pause["generation"] for e in takeover)
    owned_at = next(
        e["t"]
        for e in standby.snapshot()
        if e["ev"] == "assignment" and set(e["parts"]) == set(range(PARTITIONS))
    )
    print(
        f"p5 owned everything {owned_at - pause['t']:.1f} s after p10's pause point, then committed "
        f"{len(takeover)} transactions in {takeover[-1]['t'] - owned_at:.1f} s"
    )

    committed_values = _read_output(bootstrap, sink, "read_committed")
    expected = Counter(f"{p}:{o}" for p, o in delivered)
    counts = Counter(committed_values)
    assert {v: n for v, n in counts.items() if n > 1} == {}, "records written twice"
    assert set(counts) == set(expected), (len(set(expected) - set(counts)), len(set(counts) - set(expected)))
    # the zombie did write its third batch (aborted): a read_uncommitted reader sees it twice
    uncommitted = Counter(_read_output(bootstrap, sink, "read_uncommitted"))
    twice = sum(1 for n in uncommitted.values() if n > 1)
    assert twice == pause["records"], (twice, pause["records"])
    print(
        f"output (read_committed): {len(committed_values)} records for {RECORDS} inputs, each once; "
        f"the zombie's aborted batch of {pause['records']} visible only to read_uncommitted"
    )
