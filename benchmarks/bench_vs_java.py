"""Hot paths, ours vs Java 4.4 (and vs the plain confluent-kafka client), measured side by side in one run.

Every row runs both sides on this machine in this run; the ratio column is the other side's time divided
by ours (>1: we are faster). Java runs Kafka's own classes (the reference jars that
``scripts/fetch-java-reference.sh`` fetches) in a fresh JVM per case through
``benchmarks/java/JavaBench.java`` (compiled here with ``javac``): ``cold`` is the first call, ``warm``
the median of the calls after it (JIT warm). Ours runs each case in a fresh Python process (so its
peak RSS is the whole process's, input included): ``cold`` the first call, ``warm`` the second.

Rows:
  hash 16 B ...          ``partition_keys(keys, 12)`` (murmur2) on 1M random 16-byte keys as pyarrow binary,
                         large_binary, fixed_size_binary(16), a numpy ``S16`` array and a Python list, vs
                         Java's ``Utils.toPositive(Utils.murmur2(k)) % 12`` loop over the same keys (a
                         weighted checksum of the partitions is compared: equal means the same answers)
  sticky fresh           500 topics x 2,000 partitions (1M) x 2,000 members, equal subscriptions
                         (``StickyAssignor``)
  coop one leaves+joins  the same group's own fresh assignment as history; one member leaves, one joins
                         (``CooperativeStickyAssignor``)
  sticky unequal         the fresh group plus one member subscribed to one topic (``StickyAssignor``)
                         franz-go columns on these three rows: franz-go's ``kgo.StickyBalancer()`` /
                         ``kgo.CooperativeStickyBalancer()`` (``benchmarks/franz/``, built when ``go`` is
                         installed, else "not measured"; see ``franz_side.py``) on the very group ours gets,
                         its answer checked valid and KIP-54 balanced; franz/ours >1: we are faster
  produce ...            (only with ``--bootstrap-server``) 100-byte records, keyed and keyless, to a
                         12-partition topic, ``produce(topic, value[, key])`` with no per-record callback:
                         our ``Producer`` natively (librdkafka places), through the C record router
                         (Java's default partitioner; ``jump``) and, the C accelerator off, through Python
                         vs plain ``confluent_kafka.Producer`` with ``partitioner=murmur2_random``; and
                         kafka-python's ``KafkaProducer`` with our ``JavaDefaultPartitioner`` vs its own
                         default, and our aiokafka ``AIOKafkaProducer`` with ``PlacementPartitioner()`` vs
                         aiokafka's own (a tenth of the records); every producer sends one record before its
                         clock starts; five rounds, each running every row once: the median of the
                         per-round ratios, the best rates, and the first record's time of each row

``--quick`` shrinks the assignor cases to 100 topics x 1,000 partitions x 500 members and the keys to 200k
(CI-sized); the full sizes are the ones docs/performance.md quotes.

``--growth`` prints how cost grows instead (docs/performance.md's growth table): sticky fresh from 10k
to 4M partitions and from 100 to 5,000 members (franz-go beside them), hashing from 1M to 100M keys,
with growth exponents, the
time each step adds per partition, member or key, and the fixed cost that, added to ours, would give our
end-to-end exponent Java's.

Usage: python benchmarks/bench_vs_java.py [--quick] [--only hash,sticky,coop,unequal] [--reps 7]
       [--bootstrap-server HOST:PORT --records 1000000]
       python benchmarks/bench_vs_java.py --growth
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
JAVA_SOURCE = HERE / "java" / "JavaBench.java"
N_PARTITIONS = 12
KEY_LEN = 16
KEY_SEED = 20
KEY_FORMS = (
    "pyarrow binary",
    "pyarrow large_binary",
    "pyarrow fixed_size_binary",
    "numpy S16",
    "python list",
)

Result = dict[str, Any]


# --- Java side --------------------------------------------------------------------------------------------
def _java_classes() -> tuple[str, Path]:
    """Class path of the reference jars and the directory with JavaBench compiled against them."""
    from kafka_placement.conformance.jars import cache_dir, class_path

    jars = class_path()
    cp = ":".join(map(str, jars))
    digest = hashlib.sha256(JAVA_SOURCE.read_bytes() + cp.encode()).hexdigest()[:16]
    out = cache_dir() / "bench" / digest
    if not (out / "JavaBench.class").exists():
        javac = shutil.which("javac")
        if javac is None:
            raise SystemExit("javac not found: run scripts/fetch-java-reference.sh (it installs a JDK)")
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run([javac, "-nowarn", "-d", str(out), "-cp", cp, str(JAVA_SOURCE)], check=True)
    return cp, out


def run_java(args: list[str], heap: str = "3g") -> Result:
    cp, classes = _java_classes()
    java = shutil.which("java") or "java"
    proc = subprocess.run(
        [java, f"-Xmx{heap}", "-cp", f"{cp}:{classes}", "JavaBench", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"JavaBench {args} failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


# --- our side (each case in a fresh process) ----------------------------------------------------------------
def _vm_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def _key_bytes(count: int) -> bytes:
    import numpy as np

    return np.random.default_rng(KEY_SEED).bytes(count * KEY_LEN)


def _checksum(partitions: Any) -> int:
    import numpy as np

    p = np.asarray(partitions, dtype=np.int64)
    weights = np.arange(p.size, dtype=np.int64) % 7 + 1
    return int((p * weights).sum())


def _time_partition_keys(keys: Any, reps: int) -> Result:
    """``partition_keys(keys, 12)`` ``reps`` times: the first call is cold, the median of the rest warm."""
    from kafka_placement.partitioning import partition_keys

    times = []
    result = None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = partition_keys(keys, N_PARTITIONS)
        times.append(time.perf_counter() - t0)
    warm = sorted(times[1:]) or times
    return {
        "cold_s": times[0],
        "warm_s": warm[len(warm) // 2],
        "best_s": min(times),
        "check": _checksum(result),
        "rss_peak_mb": _vm_kb("VmHWM") / 1024,
    }


def child_hash(form: str, count: int, reps: int) -> Result:
    import numpy as np
    import pyarrow as pa

    blob = _key_bytes(count)
    fixed = np.frombuffer(blob, dtype=f"S{KEY_LEN}")
    as_list = [blob[i * KEY_LEN : (i + 1) * KEY_LEN] for i in range(count)]
    keys: Any
    if form == "pyarrow binary":
        keys = pa.array(as_list, type=pa.binary())
    elif form == "pyarrow large_binary":
        keys = pa.array(as_list, type=pa.large_binary())
    elif form == "pyarrow fixed_size_binary":
        keys = pa.array(as_list, type=pa.binary(KEY_LEN))
    elif form == "numpy S16":
        # numpy strips trailing NUL bytes of S items; keys ending in 0x00 are a different key there, so the
        # checksum is compared only for the forms that keep every byte
        keys = fixed
    else:
        keys = as_list
    del as_list
    return _time_partition_keys(keys, reps)


def child_hash_large(count: int, reps: int) -> Result:
    """``partition_keys`` on ``count`` 16-byte keys as a pyarrow binary array built straight from the key
    bytes (no Python object per key, so 100M keys fit)."""
    import numpy as np
    import pyarrow as pa

    blob = _key_bytes(count)
    offsets = np.arange(0, KEY_LEN * (count + 1), KEY_LEN, dtype=np.int32)
    keys = pa.Array.from_buffers(pa.binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(blob)])
    return _time_partition_keys(keys, reps)


def _group(topics: int, partitions: int, members: int) -> tuple[dict[str, int], dict[str, list[str]]]:
    ppt = {f"topic-{t:04d}": partitions for t in range(topics)}
    names = list(ppt)
    return ppt, {f"consumer-{m:05d}": names for m in range(members)}


def case_input(case: str, topics: int, partitions: int, members: int) -> tuple[str, dict[str, int], Any]:
    """(strategy, partitions per topic, ``{member id: Member}``) of one assignor case — the group every side
    (ours, Java's, franz-go's) is given: ``sticky`` fresh and equal, ``unequal`` that group plus one member
    on one topic, ``coop`` that group's own fresh assignment as history (generation 1), one member gone and
    one joined (no history)."""
    from kafka_placement.assignment import Member, assign

    ppt, subs = _group(topics, partitions, members)
    strategy = "sticky"
    group = {m: Member(t) for m, t in subs.items()}
    if case == "unequal":
        group["consumer-99999"] = Member([next(iter(ppt))])
    elif case == "coop":
        strategy = "cooperative-sticky"
        prev = assign(strategy, ppt, group)
        group = {m: Member(subs[m], owned=prev[m], generation=1) for m in subs if m != "consumer-00000"}
        group["consumer-new"] = Member(list(ppt))
    return strategy, ppt, group


#: warm calls of ours per case: up to WARM_CALLS, fewer once they took WARM_BUDGET_S together; the median
#: is reported, as franz-go's and Java's are (a single warm call of a few ms is at the mercy of the
#: scheduler on a loaded machine: the 10k-partition row once read 52 ms for a 0.3 ms call)
WARM_CALLS = 5
WARM_BUDGET_S = 5.0


def child_assign(case: str, topics: int, partitions: int, members: int) -> Result:
    from kafka_placement.assignment import assign

    strategy, ppt, group = case_input(case, topics, partitions, members)
    times: list[float] = []
    result: dict[str, Any] = {}
    while len(times) < 2 or (len(times) <= WARM_CALLS and sum(times[1:]) < WARM_BUDGET_S):
        result = {}  # the last call's result is freed before the clock starts, not inside the next call
        t0 = time.perf_counter()
        result = assign(strategy, ppt, group)
        times.append(time.perf_counter() - t0)
    warm = sorted(times[1:])
    return {
        "cold_s": times[0],
        "warm_s": warm[len(warm) // 2],
        "warm_calls": len(warm),
        "best_s": min(times),
        "check": max(len(v) for v in result.values()),
        "rss_peak_mb": _vm_kb("VmHWM") / 1024,
    }


def child_franz(case: str, topics: int, partitions: int, members: int, reps: int) -> Result:
    """franz-go's balancer on the group :func:`case_input` builds (``franz_side``), its answer checked."""
    from franz_side import measure
    from kafka_placement.assignment import assign

    strategy, ppt, group = case_input(case, topics, partitions, members)
    ours = assign(strategy, ppt, group) if case == "coop" else None
    return measure(case, strategy, ppt, group, reps, ours)


def run_ours(*args: str) -> Result:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


# --- live produce -------------------------------------------------------------------------------------------
#: (label, keyed?, how to make the producer, baseline) of every produce row; a baseline is the plain client
#: of the same kind (keyed or keyless) and runs in the same round as the others.
PRODUCE_ROWS = (
    ("keyed: plain confluent", True, "plain", "plain"),
    ("keyed: ours native", True, "native", "plain"),
    ("keyed: ours C router", True, "routed", "plain"),
    ("keyed: ours C router, jump", True, "jump", "plain"),
    ("keyed: ours Python path", True, "python", "plain"),
    ("keyless: plain confluent", False, "plain", "plain"),
    ("keyless: plain confluent, partition given", False, "plain-explicit", "plain"),
    ("keyless: ours C router lease", False, "routed", "plain"),
    ("keyless: ours C router lease vs partition given", False, "routed", "plain-explicit"),
    ("keyless: ours Python path", False, "python", "plain"),
    ("keyed: kafka-python default", True, "kp-default", "kp-default"),
    ("keyed: kafka-python + ours", True, "kp-ours", "kp-default"),
    ("keyless: kafka-python default", False, "kp-default", "kp-default"),
    ("keyless: kafka-python + ours", False, "kp-ours", "kp-default"),
    ("keyed: aiokafka default", True, "aio-default", "aio-default"),
    ("keyed: aiokafka + ours", True, "aio-ours", "aio-default"),
    ("keyless: aiokafka default", False, "aio-default", "aio-default"),
    ("keyless: aiokafka + ours", False, "aio-ours", "aio-default"),
)
#: keyless records one partition takes before the next, as our lease runs with librdkafka's batch.size
STICKY_RUN = 10_000
#: kafka-python and aiokafka send ~30x slower than librdkafka: their rows send this fraction of the records
KAFKA_PYTHON_SHARE = 10
#: the kafka-python and aiokafka producers' batch size
KAFKA_PYTHON_BATCH = 65536


class AioProducer:
    """An aiokafka producer driven from its own event loop, so its rows are timed like the others: every
    record awaited into the accumulator one after the other, then a flush."""

    def __init__(self, bootstrap: str, ours: bool) -> None:
        import asyncio

        self.loop = asyncio.new_event_loop()
        self.producer = self.loop.run_until_complete(self._start(bootstrap, ours))

    @staticmethod
    async def _start(bootstrap: str, ours: bool) -> Any:
        if ours:  # ours: the subclass that tells the partitioner the topic and the record's size
            from kafka_placement.clients.aiokafka.partitioner import PlacementPartitioner
            from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer
            from kafka_placement.partitioning.record import default_partitioner

            producer = AIOKafkaProducer(
                bootstrap_servers=bootstrap,
                linger_ms=20,
                max_batch_size=KAFKA_PYTHON_BATCH,
                partitioner=PlacementPartitioner(default_partitioner(KAFKA_PYTHON_BATCH)),
            )
        else:
            from aiokafka import AIOKafkaProducer as Plain

            producer = Plain(bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=KAFKA_PYTHON_BATCH)
        await producer.start()
        return producer

    def send_all(self, topic: str, value: bytes, keys: list[bytes | None]) -> None:
        async def send() -> None:
            for key in keys:
                await self.producer.send(topic, value=value, key=key)
            await self.producer.flush()

        self.loop.run_until_complete(send())

    def close(self) -> None:
        self.loop.run_until_complete(self.producer.stop())
        self.loop.close()


#: a pause before each producer starts, so the brokers have written away the records of the last one
SETTLE_S = 1.0


def produce_rates(
    bootstrap: str, records: int, rounds: int = 5
) -> tuple[dict[tuple[bool, str], list[float]], dict[tuple[bool, str], float]]:
    """Records/s of every PRODUCE_ROWS row in each of ``rounds`` rounds (each round runs every row once,
    one after the other in a shuffled order, so a ratio within a round compares rows under the same machine
    load), and the median first record of each row: construction to its delivery.

    Every producer sends one record and flushes before its clock starts (all rows alike): what is timed is
    the producer at work, not its start-up — ours waits for the topic's metadata at the first record, the
    plain client does not (it queues); the first-record times show that cost on its own."""
    import confluent_kafka
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafka_placement.clients.confluent.producer import Producer
    from kafka_placement.partitioning import native as native_switch

    topic = f"bench-produce-{os.getpid()}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, N_PARTITIONS, 1)])[topic].result(30)
    time.sleep(2)
    value = b"v" * 100
    keys = [f"key-{i:012d}".encode() for i in range(records)]
    # Java's keyless placement by hand: STICKY_RUN records to one partition, then one drawn at random
    draw = random.Random(11).randrange
    java_keyless_partitions: list[int] = []
    while len(java_keyless_partitions) < records:
        java_keyless_partitions.extend([draw(N_PARTITIONS)] * STICKY_RUN)
    del java_keyless_partitions[records:]
    config = {
        "bootstrap.servers": bootstrap,
        "linger.ms": 20,
        "batch.num.messages": 10000,
        "queue.buffering.max.messages": 1000000,
    }

    def make(kind: str) -> Any:
        if kind.startswith("aio-"):
            return AioProducer(bootstrap, ours=kind == "aio-ours")
        if kind.startswith("kp-"):
            from kafka import KafkaProducer

            from kafka_placement.clients.kafka_python.partitioners import JavaDefaultPartitioner

            # Java's keyless stickiness switches after batch.size bytes: the partitioner gets the producer's
            ours = {"partitioner": JavaDefaultPartitioner(KAFKA_PYTHON_BATCH)} if kind == "kp-ours" else {}
            return KafkaProducer(
                bootstrap_servers=bootstrap, linger_ms=20, batch_size=KAFKA_PYTHON_BATCH, **ours
            )
        if kind in ("plain", "plain-explicit"):
            return confluent_kafka.Producer({**config, "partitioner": "murmur2_random"})
        if kind == "native":
            return Producer(dict(config), partitioner="murmur2_random")
        if kind == "jump":
            return Producer(dict(config), partitioner="jump")
        if kind == "python":  # the C accelerator off: no router, every record through Python
            with native_switch.numpy_only():
                return Producer(dict(config))
        return Producer(dict(config))  # Java's default partitioner: the C router

    def first_record(producer: Any, keyed: bool) -> None:
        key = b"first" if keyed else None
        if isinstance(producer, AioProducer):
            producer.send_all(topic, value, [key])
            return
        if hasattr(producer, "produce"):
            producer.produce(topic, value, key)
        else:
            producer.send(topic, value=value, key=key)
        producer.flush(30)

    def run(producer: Any, keyed: bool, explicit: bool = False) -> float:
        if isinstance(producer, AioProducer):
            count = records // KAFKA_PYTHON_SHARE
            batch: list[bytes | None] = keys[:count] if keyed else [None] * count
            t0 = time.perf_counter()
            producer.send_all(topic, value, batch)
            elapsed = time.perf_counter() - t0
            producer.close()
            return count / elapsed
        if not hasattr(producer, "produce"):  # kafka-python
            count = records // KAFKA_PYTHON_SHARE
            t0 = time.perf_counter()
            for k in keys[:count]:
                producer.send(topic, value=value, key=k if keyed else None)
            producer.flush(120)
            elapsed = time.perf_counter() - t0
            producer.close()
            return count / elapsed
        produce = producer.produce
        # one loop shape for every row (a list walked, one call per item), so rows differ only in the call
        t0 = time.perf_counter()
        if explicit:  # what Java's keyless placement costs librdkafka itself: a partition given with every
            # record (positionally, the cheapest call) — the placement our lease makes, without our code
            for partition in java_keyless_partitions:
                while True:
                    try:
                        produce(topic, value, None, partition)
                        break
                    except BufferError:
                        producer.poll(0.05)
        elif keyed:
            for k in keys:
                while True:
                    try:
                        produce(topic, value, k)
                        break
                    except BufferError:
                        producer.poll(0.05)
        else:
            for _ in keys:
                while True:
                    try:
                        produce(topic, value)
                        break
                    except BufferError:
                        producer.poll(0.05)
        producer.flush(60)
        return records / (time.perf_counter() - t0)

    rates: dict[tuple[bool, str], list[float]] = {}
    first: dict[tuple[bool, str], list[float]] = {}
    producers = list(dict.fromkeys((keyed, kind) for _label, keyed, kind, _baseline in PRODUCE_ROWS))
    shuffle = random.Random(7).shuffle
    for _ in range(rounds):
        shuffle(producers)  # no producer always runs right after the same one (the brokers' load follows)
        for keyed, kind in producers:
            time.sleep(SETTLE_S)
            t0 = time.perf_counter()
            producer = make(kind)
            first_record(producer, keyed)
            first.setdefault((keyed, kind), []).append(time.perf_counter() - t0)
            rate = run(producer, keyed, explicit=kind == "plain-explicit")
            rates.setdefault((keyed, kind), []).append(rate)
    admin.delete_topics([topic])
    return rates, {row: sorted(times)[len(times) // 2] for row, times in first.items()}


def router_overhead(calls: int = 2_000_000, rounds: int = 3) -> dict[str, tuple[float, float]]:
    """ns per call of the C record router in front of a C sink vs the same sink called directly from
    Python (``operator.itemgetter`` stands in for confluent's ``produce``: a C callable taking the same four
    arguments), keyless under a lease and keyed; the best of ``rounds``."""
    import operator

    from kafka_placement.partitioning import native as native_switch

    module = native_switch.native_module()
    if module is None:
        return {}
    sink, topic, value, key = operator.itemgetter, "topic-a", b"v" * 100, b"key-000000000001"
    router = module.Router(sink, lambda *a, **k: None)
    router.set_route(
        topic,
        module.MURMUR2,
        0x7FFFFFFF,
        tuple(range(N_PARTITIONS)),
        True,
        False,
        False,
        time.monotonic() + 3600,
    )
    router.set_lease(topic, 3, 1 << 62)

    def per_call(fn: Any) -> float:
        best = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter()
            fn()
            best = min(best, (time.perf_counter() - t0) / calls * 1e9)
        return best

    def keyless_routed() -> None:
        for _ in range(calls):
            router(topic, value)

    def keyless_direct() -> None:
        for _ in range(calls):
            sink(topic, value, None, 3)

    def keyed_routed() -> None:
        for _ in range(calls):
            router(topic, value, key)

    def keyed_direct() -> None:
        for _ in range(calls):
            sink(topic, value, key, 3)

    return {
        "keyless": (per_call(keyless_routed), per_call(keyless_direct)),
        "keyed": (per_call(keyed_routed), per_call(keyed_direct)),
    }


# --- growth ----------------------------------------------------------------------------------------------
#: (topics, partitions per topic, members) of the sticky growth rows: partitions grow at 500 members, then
#: members grow at 100k partitions.
#: 4M partitions: a step large enough that Java's fixed cost no longer shapes its exponent.
STICKY_GROWTH = (
    (10, 1000, 500),
    (100, 1000, 500),
    (1000, 1000, 500),
    (4000, 1000, 500),
    (100, 1000, 100),
    (100, 1000, 5000),
)
HASH_GROWTH = (1_000_000, 10_000_000, 100_000_000)


def _exponent(sizes: tuple[int, int], times: tuple[float, float]) -> float:
    """The growth exponent k of time ~ size**k between two sizes."""
    import math

    return math.log(times[1] / times[0]) / math.log(sizes[1] / sizes[0])


def growth(reps: int, hashing_too: bool = True) -> None:
    """How cost grows with size, ours and Java's side by side, and the growth exponents."""
    print(
        f"{'growth':<42} {'ours warm':>11} {'Java warm':>11} {'Java/ours':>9} {'franz warm':>11} "
        f"{'franz/ours':>10}"
    )
    sticky: dict[tuple[int, int, int], tuple[float, float]] = {}
    franz_times: dict[tuple[int, int, int], float] = {}
    for shape in STICKY_GROWTH:
        java = run_java(["sticky", *map(str, shape), str(max(2, min(reps, 4)))], heap="6g")
        ours = run_ours("sticky", *map(str, shape))
        franz = run_ours("franz", "sticky", *map(str, shape), str(max(3, min(reps, 5))))
        sticky[shape] = (ours["warm_s"], java["warm_s"])
        if "warm_s" in franz:
            franz_times[shape] = franz["warm_s"]
        print(
            f"{f'sticky fresh {shape[0] * shape[1] // 1000}k partitions x {shape[2]} members':<42} "
            f"{_fmt_s(ours['warm_s'])} {_fmt_s(java['warm_s'])} {java['warm_s'] / ours['warm_s']:8.2f}x "
            f"{_franz_columns(franz, ours)}  {franz['note']}"
        )
    hashing: dict[int, tuple[float, float]] = {}
    for count in HASH_GROWTH if hashing_too else ():
        with tempfile.NamedTemporaryFile(suffix=".keys") as f:
            f.write(_key_bytes(count))
            f.flush()
            java = run_java(["murmur", f.name, str(KEY_LEN), str(N_PARTITIONS), str(min(reps, 4))], heap="6g")
        ours = run_ours("hash-large", str(count), str(min(reps, 4)))
        same = "same partitions" if ours["check"] == java["check"] else "DIFFERENT"
        hashing[count] = (ours["warm_s"], java["warm_s"])
        print(
            f"{f'hash {count // 1_000_000}M x 16 B (pyarrow binary)':<42} {_fmt_s(ours['warm_s'])} "
            f"{_fmt_s(java['warm_s'])} {java['warm_s'] / ours['warm_s']:8.2f}x  {same}"
        )
    # (label, unit, [(size, (ours s, Java s)) ...]) in growing size
    series = (
        (
            "sticky, partitions (500 members)",
            "partition",
            [(t * p, sticky[t, p, m]) for t, p, m in STICKY_GROWTH if m == 500],
        ),
        (
            "sticky, members (100k partitions)",
            "member",
            sorted((m, sticky[t, p, m]) for t, p, m in STICKY_GROWTH if t * p == 100_000),
        ),
        ("hashing, keys", "key", [(count, hashing[count]) for count in HASH_GROWTH if count in hashing]),
    )
    print(
        "growth exponents (time ~ size**k), ours / Java, end to end and per step; and the time each step "
        "adds per unit of size (what growing costs, free of the fixed cost at the small end):"
    )
    for label, unit, points in series:
        if not points:
            continue
        (first, (ours_a, java_a)), (last, (ours_b, java_b)) = points[0], points[-1]
        whole = _exponents((first, last), (ours_a, ours_b), (java_a, java_b))
        steps = []
        for (size_a, (ours_1, java_1)), (size_b, (ours_2, java_2)) in itertools.pairwise(points):
            k = _exponents((size_a, size_b), (ours_1, ours_2), (java_1, java_2))
            ours_ns = (ours_2 - ours_1) / (size_b - size_a) * 1e9
            java_ns = (java_2 - java_1) / (size_b - size_a) * 1e9
            steps.append(
                f"{_count(size_a)} -> {_count(size_b)}: k {k}, +{ours_ns:.1f} / +{java_ns:.1f} ns per {unit}"
            )
        print(f"  {label} {_count(first)} -> {_count(last)}: k {whole}; " + "; ".join(steps))
        if unit != "key" and len(franz_times) == len(STICKY_GROWTH):
            shapes = [
                shape
                for shape in STICKY_GROWTH
                if (shape[2] == 500 if unit == "partition" else shape[0] * shape[1] == 100_000)
            ]
            shapes.sort(key=lambda shape: shape[0] * shape[1] * shape[2])
            franz_k = _exponent((first, last), (franz_times[shapes[0]], franz_times[shapes[-1]]))
            print(f"    franz-go: k {franz_k:.2f} end to end")
        # an end-to-end exponent rewards a fixed cost: the constant that, added to every one of our times,
        # would bring our exponent down to Java's (0: ours already grows no faster)
        ratio = java_b / java_a
        padding = max(0.0, (ours_b - ratio * ours_a) / (ratio - 1)) if ratio > 1 else float("inf")
        print(
            f"    a fixed {padding * 1e3:.2f} ms added to each of our times would give our end-to-end "
            f"exponent Java's ({_exponent((first, last), (java_a, java_b)):.2f})"
        )


def _exponents(sizes: tuple[int, int], ours: tuple[float, float], java: tuple[float, float]) -> str:
    return f"{_exponent(sizes, ours):.2f} / {_exponent(sizes, java):.2f}"


def _count(n: int) -> str:
    return (
        f"{n // 1_000_000}M"
        if n >= 1_000_000 and n % 1_000_000 == 0
        else (f"{n // 1000}k" if n >= 10_000 and n % 1000 == 0 else f"{n:,}")
    )


# --- report -------------------------------------------------------------------------------------------------
def _franz_columns(franz: Result, ours: Result) -> str:
    """franz-go's warm time and its ratio to ours (franz-go / ours: >1 we are faster), or "not measured"."""
    if "warm_s" not in franz:
        return f"{'not':>11} {'measured':>10}"
    return f"{_fmt_s(franz['warm_s'])} {franz['warm_s'] / ours['warm_s']:9.2f}x"


def _franz_decode(franz: Result) -> str:
    if "decode_and_balance_warm_s" not in franz:
        return ""
    decoding = franz["decode_and_balance_warm_s"] * 1e3
    return f"; franz-go with decoding the members' metadata {decoding:.1f} ms ({franz.get('go', '')})"


def _fmt_s(seconds: float) -> str:
    return f"{seconds * 1e3:8.1f} ms" if seconds < 10 else f"{seconds:8.2f} s "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="CI-sized inputs")
    parser.add_argument(
        "--only",
        default="hash,sticky,coop,unequal",
        help="comma list of hash,sticky,coop,unequal (or none: only the live produce row); "
        "with --growth, without hash: only the sticky growth rows",
    )
    parser.add_argument("--reps", type=int, default=7, help="Java calls per case (the first is cold)")
    parser.add_argument("--bootstrap-server", help="also measure confluent produce on this cluster")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5, help="produce rounds (each runs every row once)")
    parser.add_argument(
        "--growth",
        action="store_true",
        help="how cost grows: sticky 10k -> 1M partitions and 100 -> 5,000 members, hashing "
        "1M -> 100M keys, ours and Java side by side (several minutes, ~8 GB of memory)",
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, *rest = args.child
        if kind == "hash":
            out = child_hash(rest[0], int(rest[1]), int(rest[2]))
        elif kind == "hash-large":
            out = child_hash_large(int(rest[0]), int(rest[1]))
        elif kind == "franz":
            out = child_franz(rest[0], *map(int, rest[1:]))
        else:
            out = child_assign(kind, *map(int, rest))
        print(json.dumps(out))
        return 0

    if args.growth:
        growth(args.reps, hashing_too="hash" in args.only.split(","))
        return 0
    only = set(args.only.split(","))
    keys = 200_000 if args.quick else 1_000_000
    shape = (100, 1000, 500) if args.quick else (500, 2000, 2000)
    print(
        f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        f"{'quick' if args.quick else 'full'} sizes"
    )
    print(
        f"{'path':<42} {'ours warm':>11} {'ours cold':>11} {'Java warm':>11} {'Java cold':>11} "
        f"{'Java/ours':>9} {'franz warm':>11} {'franz/ours':>10}  notes"
    )
    ok = True
    if "hash" in only:
        with tempfile.NamedTemporaryFile(suffix=".keys") as f:
            f.write(_key_bytes(keys))
            f.flush()
            java = run_java(["murmur", f.name, str(KEY_LEN), str(N_PARTITIONS), str(args.reps)])
        for form in KEY_FORMS:
            ours = run_ours("hash", form, str(keys), str(args.reps))
            same = ours["check"] == java["check"]
            if form != "numpy S16" and not same:
                ok = False
            per_key = ours["warm_s"] / keys * 1e9
            java_per_key = java["warm_s"] / keys * 1e9
            verdict = "S16 strips trailing NULs" if form == "numpy S16" else "DIFFERENT"
            note = f"{per_key:.2f} vs {java_per_key:.2f} ns/key; " + ("same partitions" if same else verdict)
            print(
                f"{'hash 16 B ' + form:<42} {_fmt_s(ours['warm_s'])} {_fmt_s(ours['cold_s'])} "
                f"{_fmt_s(java['warm_s'])} {_fmt_s(java['cold_s'])} "
                f"{java['warm_s'] / ours['warm_s']:8.2f}x {'-':>11} {'-':>10}  {note}"
            )
    labels = {"sticky": "sticky fresh", "coop": "coop one leaves+joins", "unequal": "sticky unequal"}
    java_names = {"sticky": "sticky", "coop": "coop-history", "unequal": "unequal"}
    for case in ("sticky", "coop", "unequal"):
        if case not in only:
            continue
        java = run_java([java_names[case], *map(str, shape), str(max(2, min(args.reps, 4)))])
        ours = run_ours(case, *map(str, shape))
        franz = run_ours("franz", case, *map(str, shape), str(max(3, args.reps)))
        size = f"{shape[0] * shape[1] // 1000}k x {shape[2]}"
        print(
            f"{labels[case] + ' ' + size:<42} {_fmt_s(ours['warm_s'])} {_fmt_s(ours['cold_s'])} "
            f"{_fmt_s(java['warm_s'])} {_fmt_s(java['cold_s'])} {java['warm_s'] / ours['warm_s']:8.2f}x "
            f"{_franz_columns(franz, ours)}  ours peak RSS {ours['rss_peak_mb']:.0f} MB (whole process); "
            f"max/member {ours['check']} (Java {java['check']}; franz-go {franz.get('check', '-')}); "
            f"{franz['note']}{_franz_decode(franz)}"
        )
        ok = ok and franz.get("valid", True)
    if args.bootstrap_server:
        for kind, (routed, direct) in router_overhead().items():
            print(
                f"# produce: the C record router, {kind}: {routed:.1f} ns per call vs {direct:.1f} ns "
                f"calling the same C sink directly (+{routed - direct:.1f} ns)"
            )
        rates, first = produce_rates(args.bootstrap_server, args.records, args.rounds)
        print(
            f"# produce: {args.records:,} records of 100 B per confluent row, {args.rounds} rounds; "
            "columns: best records/s of ours and of the baseline, the median of the per-round ratios, "
            "the ratio of the best rates, and the median first record (construction to delivery)"
        )
        for label, keyed, kind, baseline in PRODUCE_ROWS:
            if kind == baseline:
                continue
            mine, base = rates[keyed, kind], rates[keyed, baseline]
            per_round = sorted(a / b for a, b in zip(mine, base, strict=True))
            median = per_round[len(per_round) // 2]
            print(
                f"{'produce ' + label:<42} {max(mine) / 1000:>9.0f}k/s {'':>11} "
                f"{max(base) / 1000:>9.0f}k/s {'':>11} {median:8.2f}x  median of rounds "
                f"(best rates {max(mine) / max(base):.2f}x; "
                f"rounds {min(per_round):.2f}-{max(per_round):.2f}x); first record "
                f"{first[keyed, kind] * 1000:.0f} ms vs {first[keyed, baseline] * 1000:.0f} ms"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
