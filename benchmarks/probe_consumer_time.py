"""Where our confluent Consumer's time goes (issue 46 item 2; docs/performance.md, "Where the confluent
Consumer's time goes"): the probes behind that section, against a running cluster.

Usage (.venv/bin/python benchmarks/probe_consumer_time.py ...):
  produce BOOT N                       -> a new 6-partition topic with N keyed 100-byte records
  nocommit BOOT TOPIC N IMPL [SWITCH]  -> JSON: records/s, per thread time on a CPU and waiting for one
      (/proc/self/task/*/schedstat), context switches, GC passes; SWITCH = sys.setswitchinterval
      IMPL: plain | ours | ours-raw (ours, the loop calling librdkafka's poll directly) | plain+kc (plain
      and an idle joined kafka-python KafkaConsumer in the process) | rk-assign (librdkafka as ours runs
      it: manual assign, no offset store)
  synclat BOOT TOPIC K                 -> medians of a plain member's synchronous commit, then ours' in
      phases, kafka-python's IO-thread path and (when the Consumer has one) the commit connection in
      alternating blocks of K
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import confluent_kafka


def produce(boot: str, n: int) -> str:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"probe-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": boot})
    admin.create_topics([NewTopic(topic, 6, 1)])[topic].result()
    time.sleep(2)
    p = Producer(
        {
            "bootstrap.servers": boot,
            "linger.ms": 20,
            "batch.num.messages": 10000,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    for i in range(n):
        while True:
            try:
                p.produce(topic, key=str(i).encode(), value=b"x" * 100)
                break
            except BufferError:
                p.poll(0.1)
    assert p.flush(120) == 0
    return topic


def threads() -> dict[str, tuple[float, int, int]]:
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
            status = Path(f"/proc/self/task/{tid}/status").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        sched = Path(f"/proc/self/task/{tid}/schedstat").read_text().split()
        cpu = int(sched[0]) / 1e9  # ns on a CPU
        wait = int(sched[1]) / 1e9  # ns runnable, waiting for a CPU
        vol = int(status.split("voluntary_ctxt_switches:")[1].split()[0])
        invol = int(status.split("nonvoluntary_ctxt_switches:")[1].split()[0])
        out[f"{name}/{tid}"] = (cpu, wait, vol, invol)
    return out


def nocommit(boot: str, topic: str, n: int, impl: str, switch: float | None) -> dict[str, Any]:
    if switch is not None:
        sys.setswitchinterval(switch)
    group = f"probe-{uuid.uuid4().hex[:8]}"
    conf = {
        "bootstrap.servers": boot,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    kc = None
    if impl.startswith("ours"):
        from kafka_placement.clients.confluent import Consumer, FailoverAssignor

        c: Any = Consumer(conf, assignor=FailoverAssignor(priority=1))
    elif impl != "rk-assign":
        c = confluent_kafka.Consumer({**conf, "partition.assignment.strategy": "range"})
        if impl == "plain+kc":
            from kafka import KafkaConsumer

            kc = KafkaConsumer(
                bootstrap_servers=boot,
                group_id=group + "-kc",
                enable_auto_commit=False,
                metrics_enabled=False,
            )
            kc.subscribe([topic])
            while not kc.assignment():
                kc.poll(timeout_ms=100, max_records=1)  # joined; then never polled again
    if impl == "rk-assign":  # librdkafka as ours runs it: manual assign, no offset store, no group
        c = confluent_kafka.Consumer({**conf, "enable.auto.offset.store": False})
        c.assign([confluent_kafka.TopicPartition(topic, p) for p in range(6)])
    else:
        c.subscribe([topic])
    msg = None
    while msg is None or msg.error() is not None:
        msg = c.poll(1.0)
    poll = c._rk.poll if impl == "ours-raw" else c.poll
    import gc

    gc_time = {0: 0.0, 1: 0.0, 2: 0.0}
    gc_count = {0: 0, 1: 0, 2: 0}
    gc_start = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_start[0] = time.perf_counter()
        else:
            gc_time[info["generation"]] += time.perf_counter() - gc_start[0]
            gc_count[info["generation"]] += 1

    gc.callbacks.append(on_gc)
    objects = len(gc.get_objects())
    before = threads()
    t_cpu = time.thread_time()
    start = time.perf_counter()
    seen = 1
    last: dict[int, int] = {}
    while seen < n:
        m = poll(1.0)
        if m is not None and m.error() is None:
            seen += 1
            last[m.partition()] = m.offset()
    elapsed = time.perf_counter() - start
    main_cpu = time.thread_time() - t_cpu
    gc.callbacks.remove(on_gc)
    after = threads()
    c.close()
    if kc is not None:
        kc.close()
    deltas = {
        k: tuple(round(a - b, 3) for a, b in zip(after[k], before.get(k, (0, 0, 0, 0)), strict=True))
        for k in after
    }
    return {
        "impl": impl,
        "switch": switch,
        "per_s": (n - 1) / elapsed,
        "main_cpu_s": main_cpu,
        "elapsed_s": elapsed,
        "gc_objects": objects,
        "gc_ms": {g: round(t * 1000, 1) for g, t in gc_time.items()},
        "gc_count": gc_count,
        "threads": {k: v for k, v in deltas.items() if any(v)},
    }


def synclat(boot: str, topic: str, k: int) -> dict[str, Any]:
    from kafka.net.connection import KafkaConnection
    from kafka.net.transport import KafkaTCPTransport

    from kafka_placement.clients.confluent import Consumer, FailoverAssignor
    from kafka_placement.clients.confluent import offsets as offsets_module

    marks: dict[str, float] = {}
    active = [False]

    def mark(name: str) -> None:
        if active[0] and name not in marks:
            marks[name] = time.perf_counter()

    GC = offsets_module.GroupCommitter
    orig_send_all, orig_finish = GC._send_all, GC._finish
    orig_sock_send, orig_data = KafkaTCPTransport._sock_send, KafkaConnection.data_received

    async def send_all(self: Any) -> None:
        mark("io_start")
        await orig_send_all(self)

    def finish(self: Any, result: Any) -> None:
        mark("finish")
        orig_finish(self, result)

    def sock_send(self: Any, *a: Any, **kw: Any) -> Any:
        mark("sent")
        return orig_sock_send(self, *a, **kw)

    def data_received(self: Any, data: Any) -> Any:
        mark("received")
        return orig_data(self, data)

    GC._send_all, GC._finish = send_all, finish
    KafkaTCPTransport._sock_send, KafkaConnection.data_received = sock_send, data_received

    conf = {
        "bootstrap.servers": boot,
        "group.id": f"probe-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    plain_ms = []
    pc = confluent_kafka.Consumer({**conf, "partition.assignment.strategy": "range"})
    pc.subscribe([topic])
    for _ in range(3 * k):
        msg = None
        while msg is None or msg.error() is not None:
            msg = pc.poll(1.0)
        t0 = time.perf_counter()
        pc.commit(msg, asynchronous=False)
        plain_ms.append((time.perf_counter() - t0) * 1000)
    pc.close()
    time.sleep(1)
    c = Consumer(conf, assignor=FailoverAssignor(priority=1))
    c.subscribe([topic])
    msg = None
    while msg is None or msg.error() is not None:
        msg = c.poll(1.0)
    link = getattr(c._commits, "_connection", None)
    rows: dict[str, list[dict[str, float]]] = {"io-thread": [], "connection": []}
    for block in range(6):
        path = "io-thread" if block % 2 == 0 or link is None else "connection"
        c._commits._connection = None if path == "io-thread" else link
        for _ in range(k):
            msg = None
            while msg is None or msg.error() is not None:
                msg = c.poll(1.0)
            marks.clear()
            active[0] = True
            t0 = time.perf_counter()
            c.commit(msg, asynchronous=False)
            t5 = time.perf_counter()
            active[0] = False
            rows[path].append({"t0": t0, **marks, "t5": t5})
    c.close()

    def med(path: str, a: str, b: str) -> float | None:
        vals = [(r[b] - r[a]) * 1000 for r in rows[path] if a in r and b in r]
        return round(statistics.median(vals), 3) if vals else None

    out: dict[str, Any] = {
        "plain librdkafka commit() (same group, before)": round(statistics.median(plain_ms), 3)
    }
    for path in rows:
        if not rows[path]:
            continue
        out[path] = {
            "n": len(rows[path]),
            "total": med(path, "t0", "t5"),
            "hop_in (commit -> IO thread runs)": med(path, "t0", "io_start"),
            "to_socket (-> bytes sent)": med(path, "io_start", "sent")
            if path == "io-thread"
            else med(path, "t0", "sent"),
            "broker (sent -> response bytes)": med(path, "sent", "received"),
            "response (-> result recorded)": med(path, "received", "finish") if path == "io-thread" else None,
            "hop_out (-> caller returns)": med(path, "finish", "t5")
            if path == "io-thread"
            else med(path, "received", "t5"),
        }
    return out


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "produce":
        print(produce(sys.argv[2], int(sys.argv[3])))
    elif cmd == "nocommit":
        sw = float(sys.argv[6]) if len(sys.argv) > 6 else None
        print(json.dumps(nocommit(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sw)))
    elif cmd == "synclat":
        print(json.dumps(synclat(sys.argv[2], sys.argv[3], int(sys.argv[4])), indent=1))
