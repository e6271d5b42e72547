"""Consuming and committing: our confluent ``Consumer`` (librdkafka fetching, the group and the
commits by kafka-python's coordinator with our ``failover`` assignor) next to a plain
``confluent_kafka.Consumer`` (librdkafka's built-in range), side by side in one run on one live
cluster, for every commit mode an application uses:

  none        poll() per record, no commits
  async       poll() per record, ``commit(msg, asynchronous=True)`` after each
  sync        poll() per record, ``commit(msg, asynchronous=False)`` after each
  sync/1000   poll() per record, ``commit(asynchronous=False)`` (all positions) after every 1,000th
  auto        ``enable.auto.commit=true`` (librdkafka's default, every 5 s and at close)
  store+auto  ``enable.auto.offset.store=false``, ``store_offsets(msg)`` after each + auto-commit
  consume     ``consume(1000)`` batches, no commits

Each measurement is a fresh subprocess, one group member reading the same topic from the start
(6 partitions, keyed records of 100 bytes, written once before the runs). Both clients of a row
use the same group id, one after the other (the group deleted in between): the same group
coordinator on the broker, whose commit latency differs from broker to broker here.
Reported per row: the join (subscribe() to the first record), records/s from the first record to
the last, the ratio ours/plain, close() time (where queued commits are waited for), the ratio of the
rates until committed (first record to the end of close(): an asynchronous commit is done when the
broker answered it, and librdkafka sends one request per commit call), failed commits
(``on_commit`` errors + commit exceptions), and the group's committed offsets after close()
compared with the records read (``left`` = records read but not committed; 0 means nothing would
be replayed). Before each committing mode's timed pair, a plain member commits ``--warm-commits``
times in that pair's group, untimed: the first client to commit in a fresh group is slower, whichever
it is. Rounds alternate the implementations
(shared machine); the best rate of the rounds is reported, and the median over the rounds of each
round's ours/plain ratio (``--rounds 3``: the median of three side-by-side runs).

Usage: .venv/bin/python benchmarks/bench_consumer.py [--records N] [--async-records N] [--sync-records N]
       [--warm-commits N] [--rounds R] [--modes none,async,...] [--bootstrap H:P]
       [--security plaintext|sasl_ssl] [--librdkafka KEY=VALUE ...]
(without --bootstrap a throw-away cluster is started and removed; needs the Docker image;
``--security sasl_ssl`` starts it with a SASL_SSL listener — SCRAM over TLS — and every client of the
run, ours, plain and the helpers, connects through it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import uuid
from typing import Any, NamedTuple

PARTITIONS = 6
VALUE = b"x" * 100
MODES = ("none", "async", "sync", "sync/1000", "auto", "store+auto", "consume")
#: Modes bounded by one commit round trip per record read fewer records: sync per record
#: (--sync-records), and async per record (--async-records), where librdkafka sends one
#: OffsetCommit per commit and its close() waits for all of them.


class Run(NamedTuple):
    """One measured run: a fresh subprocess of one client (``impl``: ours or plain) in one mode."""

    impl: str
    mode: str
    client: dict[str, Any]
    topic: str
    records: int
    group: str
    settings: dict[str, Any]  # --librdkafka: given to both clients


def _child(run: Run) -> dict[str, Any]:
    import confluent_kafka

    impl, mode, client, topic, records, group, settings = run

    failed = [0]
    committed_calls = [0]

    def on_commit(err: Any, partitions: list[Any]) -> None:
        committed_calls[0] += 1
        if err is not None or any(tp.error is not None for tp in partitions):
            failed[0] += 1

    auto = mode in ("auto", "store+auto")
    conf: dict[str, Any] = {
        **client,
        **settings,  # --librdkafka: the same for both clients
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": auto,
        "on_commit": on_commit,
    }
    if mode == "store+auto":
        conf["enable.auto.offset.store"] = False
    if impl == "ours":
        from kafka_placement.clients.confluent import Consumer, FailoverAssignor

        consumer: Any = Consumer(conf, assignor=FailoverAssignor(priority=1))
    else:
        consumer = confluent_kafka.Consumer({**conf, "partition.assignment.strategy": "range"})
    seen = 0
    last: dict[int, int] = {}
    start = time.perf_counter()
    consumer.subscribe([topic])
    first_msg = None
    while first_msg is None:  # the join: until the first record
        msg = consumer.poll(1.0)
        if msg is not None and msg.error() is None:
            first_msg = msg
    first = time.perf_counter()

    def handle(msg: Any) -> None:
        nonlocal seen
        seen += 1
        last[msg.partition()] = msg.offset()
        try:
            if mode == "async":
                consumer.commit(msg, asynchronous=True)
            elif mode == "sync":
                consumer.commit(msg, asynchronous=False)
            elif mode == "sync/1000" and (seen % 1000 == 0 or seen == records):
                consumer.commit(asynchronous=False)  # the positions of every partition
            elif mode == "store+auto":
                consumer.store_offsets(msg)
        except confluent_kafka.KafkaException:
            failed[0] += 1
        except Exception as exc:  # ours: kafka_placement.errors.CommitFailedError
            if type(exc).__name__ != "CommitFailedError":
                raise
            failed[0] += 1

    handle(first_msg)
    if mode == "consume":
        while seen < records:
            for msg in consumer.consume(min(1000, records - seen), 1.0):
                if msg.error() is None:
                    handle(msg)
    else:
        poll = consumer.poll
        while seen < records:
            msg = poll(1.0)
            if msg is not None and msg.error() is None:
                handle(msg)
    end = time.perf_counter()
    consumer.close()  # auto-commit commits here; queued commits are answered before it returns
    close_s = time.perf_counter() - end
    left = _left_uncommitted(client, group, topic, last)
    return {
        "impl": impl,
        "mode": mode,
        "records": seen,
        "join_s": first - start,
        "seconds": end - first,
        "per_s": (seen - 1) / (end - first),
        "failed": failed[0],
        "left": left,
        "on_commit_calls": committed_calls[0],
        "close_s": close_s,
    }


def _left_uncommitted(client: dict[str, Any], group: str, topic: str, last: dict[int, int]) -> int | None:
    """Records read but not covered by the group's committed offsets (read back with a plain
    client, from the broker); None when the mode commits nothing."""
    import confluent_kafka

    reader = confluent_kafka.Consumer({**client, "group.id": group})
    try:
        tps = [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)]
        committed = {tp.partition: tp.offset for tp in reader.committed(tps, timeout=30)}
    finally:
        reader.close()
    if all(o < 0 for o in committed.values()):
        return None
    return sum(max(0, o + 1 - max(committed.get(p, 0), 0)) for p, o in last.items())


def _produce(client: dict[str, Any], records: int) -> str:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"bench-consume-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(dict(client))
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result()
    time.sleep(2)  # leaders elected
    producer = Producer(
        {
            **client,
            "linger.ms": 20,
            "batch.num.messages": 10000,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    for i in range(records):
        while True:
            try:
                producer.produce(topic, key=str(i).encode(), value=VALUE)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(120) == 0
    return topic


def _run(run: Run) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child", json.dumps(run._asdict())]
    out = subprocess.run(argv, check=True, capture_output=True, text=True, timeout=900)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    _delete_group(run.client, run.group)  # the next run starts from the beginning again
    return result


def _delete_group(client: dict[str, Any], group: str) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(dict(client))
    for _ in range(50):  # the member's LeaveGroup may still be settling
        try:
            admin.delete_consumer_groups([group], request_timeout=30)[group].result()
            return
        except Exception as exc:  # GROUP_ID_NOT_FOUND: nothing was ever committed
            if "GROUP_ID_NOT_FOUND" in str(exc):
                return
            time.sleep(0.2)
    raise RuntimeError(f"could not delete consumer group {group}")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(_child(Run(**json.loads(sys.argv[2])))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000, help="records per run (default 200,000)")
    parser.add_argument(
        "--async-records",
        type=int,
        default=20_000,
        help="records per run of the async-per-record mode (default 20,000: 5,000 records took 20-140 ms "
        "of loop, too short to read on this machine)",
    )
    parser.add_argument(
        "--sync-records",
        type=int,
        default=1_000,
        help="records per run of the sync-per-record mode (default 1,000)",
    )
    parser.add_argument(
        "--warm-commits",
        type=int,
        default=1_500,
        help="synchronous commits a plain member makes in each committing mode's group before its timed "
        "pair, untimed (default 1,500; 0: none). The first client to commit in a fresh group ran at "
        "457-505 commits/s where later ones ran 688-875, whichever client it was",
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--librdkafka",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a librdkafka consumer setting given to both clients of every measured run (repeatable), "
        "e.g. fetch.queue.backoff.ms=10 (docs/performance.md: the fetch queue's backoff); default none",
    )
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--bootstrap")
    parser.add_argument(
        "--security",
        choices=("plaintext", "sasl_ssl"),
        default="plaintext",
        help="the listener of the cluster this run starts (without --bootstrap); default plaintext",
    )
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown mode(s) {unknown}; allowed: {', '.join(MODES)}")
    settings: dict[str, Any] = {}
    for item in args.librdkafka:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            parser.error(f"--librdkafka {item!r}: expected KEY=VALUE")
        settings[key.strip()] = value
    if args.bootstrap is not None and args.security != "plaintext":
        parser.error("--security starts a cluster of its own: not with --bootstrap")
    cluster = None
    client: dict[str, Any] = {"bootstrap.servers": args.bootstrap}
    if args.bootstrap is None:
        from kafka_placement.testing.cluster import KafkaCluster

        cluster = KafkaCluster(security=args.security)
        cluster.start()
        client = dict(cluster.librdkafka_settings())
    try:
        topic = _produce(client, max(args.records, args.async_records, args.sync_records, args.warm_commits))
        best: dict[tuple[str, str], dict[str, Any]] = {}
        failed: dict[tuple[str, str], int] = {}
        ratios: dict[str, list[float]] = {mode: [] for mode in modes}  # ours/plain of each round's pair
        committed_ratios: dict[str, list[float]] = {mode: [] for mode in modes}  # the same, until committed
        for round_ in range(args.rounds):
            for mode in modes:
                n = {"sync": args.sync_records, "async": args.async_records}.get(mode, args.records)
                # one group id for both, one after the other (its offsets deleted in between): the
                # same group coordinator, so the same commit latency on the broker's side
                group = f"bench-{mode.replace('/', '-').replace('+', '-')}-{uuid.uuid4().hex[:8]}"
                rate: dict[str, float] = {}
                until_committed: dict[str, float] = {}
                if args.warm_commits > 0 and mode not in ("none", "consume"):
                    _run(Run("plain", "sync", client, topic, args.warm_commits, group, settings))  # untimed
                for impl in ("plain", "ours") if round_ % 2 == 0 else ("ours", "plain"):
                    r = _run(Run(impl, mode, client, topic, n, group, settings))
                    rate[impl] = r["per_s"]
                    until_committed[impl] = (r["records"] - 1) / (r["seconds"] + r["close_s"])
                    failed[impl, mode] = failed.get((impl, mode), 0) + r["failed"]
                    if (impl, mode) not in best or r["per_s"] > best[impl, mode]["per_s"]:
                        best[impl, mode] = r
                    print(
                        f"    [{impl} {mode}: {r['per_s']:,.0f} rec/s, join {r['join_s']:.2f} s, "
                        f"close {r['close_s']:.2f} s, failed {r['failed']}, left {r['left']}, "
                        f"on_commit calls {r['on_commit_calls']}]",
                        file=sys.stderr,
                        flush=True,
                    )
                ratios[mode].append(rate["ours"] / rate["plain"])
                committed_ratios[mode].append(until_committed["ours"] / until_committed["plain"])
        print(
            f"{args.records:,} records ({args.async_records:,} async, {args.sync_records:,} sync per "
            f"record), {PARTITIONS} partitions, one member, poll() per record, best of {args.rounds} "
            f"rounds, and the median of the rounds' ours/plain pairs; failed commits summed over rounds; "
            f"listener "
            f"{client.get('security.protocol', 'PLAINTEXT')}"
            + (f"; both clients with {settings}" if settings else "")
        )
        print(
            f"  {'mode':<11} {'plain rec/s':>12} {'ours rec/s':>12} {'ours/plain':>10} "
            f"{'join plain':>10} {'join ours':>9} {'close p/o':>11} {'failed plain':>12} "
            f"{'failed ours':>11} {'left p/o':>9}  median ratio (each round); until committed"
        )
        for mode in modes:
            p, o = best["plain", mode], best["ours", mode]
            left = "/".join("-" if r["left"] is None else str(r["left"]) for r in (p, o))
            print(
                f"  {mode:<11} {p['per_s']:>12,.0f} {o['per_s']:>12,.0f} {o['per_s'] / p['per_s']:>9.2f}x "
                f"{p['join_s']:>9.2f}s {o['join_s']:>8.2f}s {p['close_s']:>5.1f}/{o['close_s']:<4.1f}s "
                f"{failed['plain', mode]:>12} "
                f"{failed['ours', mode]:>11} {left:>9}  {statistics.median(ratios[mode]):.2f}x "
                f"({' / '.join(f'{x:.2f}' for x in ratios[mode])}); "
                f"{statistics.median(committed_ratios[mode]):.2f}x "
                f"({' / '.join(f'{x:.2f}' for x in committed_ratios[mode])})"
            )
    finally:
        if cluster is not None:
            cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
