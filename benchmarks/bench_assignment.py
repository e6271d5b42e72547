"""Sticky / cooperative-sticky assignment: ours vs kafka-python's StickyPartitionAssignor, in one run.

Every measurement runs in its own subprocess (fair memory numbers: nothing left over from another
case). Inside the child the input is built first (not timed), the peak-RSS counter is reset
(``/proc/self/clear_refs``), then the assignment is timed; the child reports wall time, the RSS growth
at peak (VmHWM - VmRSS before: the memory the call itself needs), the whole process's peak RSS
(interpreter, imports - numpy for us - and the input included) and, in a second child, the
tracemalloc peak of the call.

Cases (names as printed):
  10k x 500 fresh         100 topics x 100 partitions, 500 members, equal subscriptions, no history
  10k x 500 one leaves    the same group after one member left (previous assignment as owned)
  1M x 2000 fresh         500 topics x 2000 partitions, 2000 members (Java StickyAssignor: ~1.4 s)
  1M x 2000 one leaves    ... previous assignment, one member left
  1M x 2000+1 unequal     ... plus one member subscribed to one topic (Java: 4-5 s)
  40k x 800+1 unequal     50 topics x 800 partitions, 800 members + 1 on one topic
                          (franz-go's "small_imbalance"; Java 100-200 ms, franz-go 12 ms)
  10k x 500 coop join     cooperative-sticky round one when a 501st member joins

Then a quality comparison on random rebalances (join/leave/resubscribe): KIP-54 validity, balance
score and partitions kept, ours vs kafka-python's sticky.

Usage: .venv/bin/python benchmarks/bench_assignment.py [--quick] [--no-kafka-python]
       [--slow-kafka-python] [--quality N] [--no-tracemalloc] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

Result = dict[str, Any]


# --- inputs -----------------------------------------------------------------------------------------
def _equal(topics: int, partitions: int, members: int) -> tuple[dict[str, int], dict[str, list[str]]]:
    ppt = {f"topic-{i:04d}": partitions for i in range(topics)}
    names = list(ppt)
    return ppt, {f"consumer-{i:05d}": names for i in range(members)}


def case_input(name: str) -> tuple[dict[str, int], dict[str, list[str]], str]:
    """(partitions_per_topic, subscriptions, history) where history is fresh|leave|join."""
    if name == "10k x 500 fresh":
        return (*_equal(100, 100, 500), "fresh")
    if name == "10k x 500 one leaves":
        return (*_equal(100, 100, 500), "leave")
    if name == "10k x 500 coop join":
        return (*_equal(100, 100, 500), "join")
    if name == "1M x 2000 fresh":
        return (*_equal(500, 2000, 2000), "fresh")
    if name == "1M x 2000 one leaves":
        return (*_equal(500, 2000, 2000), "leave")
    if name == "1M x 2000+1 unequal":
        ppt, subs = _equal(500, 2000, 2000)
        subs["consumer-99999"] = [next(iter(ppt))]
        return ppt, subs, "fresh"
    if name == "40k x 800+1 unequal":
        ppt, subs = _equal(50, 800, 800)
        subs["consumer-99999"] = [next(iter(ppt))]
        return ppt, subs, "fresh"
    raise SystemExit(f"unknown case {name!r}")


# --- implementations (imported in the child only) -----------------------------------------------------
def _ours(cooperative: bool) -> Callable[..., Any]:
    from kafka_placement.assignment.sticky import assign_sticky
    from kafka_placement.assignment.sticky import problem as _sticky_core
    from kafka_placement.assignment.sticky.cooperative import assign_cooperative_sticky
    from kafka_placement.vocabulary import Member

    fn = assign_cooperative_sticky if cooperative else assign_sticky

    def prepare(ppt: dict[str, int], subs: dict[str, list[str]], history: str) -> Callable[[], Any]:
        members = {m: Member(t) for m, t in subs.items()}
        if history in ("leave", "join"):
            prev = assign_sticky(ppt, members)
            if history == "leave":
                del members[next(iter(members))]
            members = {m: Member(subs[m], owned=prev[m], generation=1) for m in members}
            if history == "join":
                members["consumer-new"] = Member(next(iter(subs.values())))
        _sticky_core._TP_CACHE.clear()  # cold: the call builds its TopicPartitions itself
        _sticky_core._tp_cache_size = 0
        return lambda: fn(ppt, members)

    return prepare


def _kafka_python() -> Callable[..., Any]:
    from kafka_placement.conformance.kafka_python_sticky import prepare_kafka_python_sticky
    from kafka_placement.vocabulary import Member

    def prepare(ppt: dict[str, int], subs: dict[str, list[str]], history: str) -> Callable[[], Any]:
        members = {m: Member(t) for m, t in subs.items()}
        if history in ("leave", "join"):
            from kafka_placement.assignment.sticky import assign_sticky

            prev = assign_sticky(ppt, members)  # same history as ours
            members = {m: Member(subs[m], owned=prev[m], generation=1) for m in subs}
            if history == "leave":
                del members[next(iter(members))]
            else:
                members["consumer-new"] = Member(next(iter(subs.values())), generation=1)
        return prepare_kafka_python_sticky(ppt, members)

    return prepare


def _rss_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def child(impl: str, case: str, mode: str) -> None:
    ppt, subs, history = case_input(case)
    prepare = _kafka_python() if impl == "kafka-python" else _ours(cooperative="coop" in case)
    run = prepare(ppt, subs, history)
    out: Result = {}
    if mode == "tracemalloc":
        tracemalloc.start()
        run()
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    else:
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # reset VmHWM to the current RSS
        except OSError:
            pass
        before = _rss_kb("VmRSS")
        t0 = time.perf_counter()
        result = run()
        out["seconds"] = time.perf_counter() - t0
        out["rss_peak_growth_mb"] = (_rss_kb("VmHWM") - before) / 1024
        out["rss_total_peak_mb"] = _rss_kb("VmHWM") / 1024
        if impl == "ours":
            t0 = time.perf_counter()
            run()
            out["warm_seconds"] = time.perf_counter() - t0
        sizes = [len(v) for v in result.values()]
        out["sizes"] = [min(sizes), max(sizes)]
    print(json.dumps(out))


def measure(impl: str, case: str, mode: str, timeout: float) -> Result | None:
    cmd = [sys.executable, __file__, "--child", impl, case, mode]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return None
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


# --- quality on random rebalances -----------------------------------------------------------------------
def quality(n: int, seed: int = 54) -> None:
    from kafka_placement.assignment.assignment_quality import balance_score
    from kafka_placement.assignment.sticky import assign_sticky
    from kafka_placement.assignment.sticky.checks import kept, problems
    from kafka_placement.conformance.kafka_python_sticky import kafka_python_sticky
    from kafka_placement.vocabulary import Member

    rng = random.Random(seed)
    tally = {"better": 0, "equal": 0, "worse": 0, "ours_invalid": 0, "theirs_unbalanced": 0}
    kept_ours = kept_theirs = score_ours = score_theirs = 0
    t_ours = t_theirs = 0.0
    for _ in range(n):
        n_topics, n_members = rng.randint(1, 15), rng.randint(2, 30)
        ppt = {f"t{i:02d}": rng.randint(1, 25) for i in range(n_topics)}
        names = list(ppt)
        subs = {f"C{i:02d}": rng.sample(names, rng.randint(1, n_topics)) for i in range(n_members)}
        prev = assign_sticky(ppt, {m: Member(s) for m, s in subs.items()})
        live = {m: s for m, s in subs.items() if rng.random() < 0.8}
        for j in range(rng.randint(0, 4)):
            live[f"N{j}"] = rng.sample(names, rng.randint(1, n_topics))
        for m in list(live):
            if rng.random() < 0.2:
                live[m] = rng.sample(names, rng.randint(1, n_topics))
        if not live:
            continue
        members = {m: Member(s, owned=prev.get(m, ()), generation=1) for m, s in live.items()}
        t0 = time.perf_counter()
        a = assign_sticky(ppt, members)
        t_ours += time.perf_counter() - t0
        t0 = time.perf_counter()
        b = kafka_python_sticky(ppt, members)
        t_theirs += time.perf_counter() - t0
        if problems(ppt, members, a):
            tally["ours_invalid"] += 1
        if problems(ppt, members, b):
            tally["theirs_unbalanced"] += 1
        sa, sb = balance_score(a), balance_score(b)
        tally["better" if sa < sb else "equal" if sa == sb else "worse"] += 1
        score_ours += sa
        score_theirs += sb
        kept_ours += kept(prev, a)
        kept_theirs += kept(prev, b)
    print(f"\nQuality on {n} random rebalances (1-15 topics, 2-30 members, joins/leaves/resubscriptions):")
    print(
        f"  balance score (KIP-54, lower is better): ours more balanced in {tally['better']}, "
        f"equal in {tally['equal']}, less balanced in {tally['worse']}; totals ours {score_ours} "
        f"vs kafka-python {score_theirs}"
    )
    print(f"  partitions kept: ours {kept_ours} vs kafka-python {kept_theirs}")
    print(
        f"  invalid/unbalanced results (KIP-54 check): ours {tally['ours_invalid']}, "
        f"kafka-python {tally['theirs_unbalanced']}"
    )
    print(f"  total time: ours {t_ours:.3f} s, kafka-python {t_theirs:.3f} s")


# --- main -------------------------------------------------------------------------------------------------
def _fmt(r: Result | None, key: str, unit: str) -> str:
    if r is None:
        return "failed"
    if "timeout" in r:
        return f">{r['timeout']:.0f} s (timeout)"
    v = r.get(key)
    return "-" if v is None else f"{v:.3f} {unit}" if unit == "s" else f"{v:.1f} {unit}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--child", nargs=3, metavar=("IMPL", "CASE", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="only the 10k x 500 cases and 50 quality runs")
    parser.add_argument("--no-kafka-python", action="store_true", help="skip kafka-python's runs")
    parser.add_argument(
        "--slow-kafka-python", action="store_true", help="also run kafka-python on the 40k x 801 case"
    )
    parser.add_argument("--quality", type=int, default=300, help="random rebalances to compare (default 300)")
    parser.add_argument("--no-tracemalloc", action="store_true", help="skip the tracemalloc children")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="timed children per case and implementation; the median is shown",
    )
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return

    cases = ["10k x 500 fresh", "10k x 500 one leaves", "10k x 500 coop join"]
    if not args.quick:
        cases += ["1M x 2000 fresh", "1M x 2000 one leaves", "1M x 2000+1 unequal", "40k x 800+1 unequal"]
    kp_cases = {"10k x 500 fresh", "10k x 500 one leaves"}
    if args.slow_kafka_python:
        kp_cases.add("40k x 800+1 unequal")
    published = {
        "1M x 2000 fresh": "Java ~1.4 s, franz-go 157 ms (quoted)",
        "1M x 2000+1 unequal": "Java 4-5 s (quoted)",
        "40k x 800+1 unequal": "Java 100-200 ms, franz-go 12 ms (quoted)",
    }
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load} (shared machine: "
        "times scale with it); one subprocess per measurement\n"
    )
    header = (
        f"{'case':24} {'impl':13} {'time':>12} {'warm':>10} {'RSS growth':>12} {'tracemalloc':>13} "
        f"{'process peak':>13}  sizes"
    )
    print(header)
    print("-" * len(header))
    for case in cases:
        impls = ["ours"] + (["kafka-python"] if case in kp_cases and not args.no_kafka_python else [])
        rows: dict[str, Result | None] = {}
        for impl in impls:
            timeout = 600.0 if impl == "kafka-python" else 120.0
            runs = [measure(impl, case, "time", timeout) for _ in range(args.repeat)]
            good = [x for x in runs if x is not None and "seconds" in x]
            r = sorted(good, key=lambda x: float(x["seconds"]))[len(good) // 2] if good else runs[0]
            if r is not None and not args.no_tracemalloc and "timeout" not in r:
                tm = measure(impl, case, "tracemalloc", timeout * 3)
                if tm is not None and "timeout" not in tm:
                    r.update(tm)
            rows[impl] = r
            print(
                f"{case:24} {impl:13} {_fmt(r, 'seconds', 's'):>12} {_fmt(r, 'warm_seconds', 's'):>10} "
                f"{_fmt(r, 'rss_peak_growth_mb', 'MB'):>12} {_fmt(r, 'tracemalloc_peak_mb', 'MB'):>13} "
                f"{_fmt(r, 'rss_total_peak_mb', 'MB'):>13}  "
                f"{(r or {}).get('sizes', '')}",
                flush=True,
            )
        ours, kp = rows.get("ours"), rows.get("kafka-python")
        if ours and kp and "seconds" in ours and "seconds" in kp:
            line = f"{'':24} ratio: kafka-python / ours = {kp['seconds'] / ours['seconds']:.0f}x time"
            if ours.get("rss_peak_growth_mb") and kp.get("rss_peak_growth_mb"):
                line += f", {kp['rss_peak_growth_mb'] / max(ours['rss_peak_growth_mb'], 0.1):.0f}x RSS growth"
            if ours.get("tracemalloc_peak_mb") and kp.get("tracemalloc_peak_mb"):
                line += f", {kp['tracemalloc_peak_mb'] / ours['tracemalloc_peak_mb']:.0f}x tracemalloc peak"
            if ours.get("rss_total_peak_mb") and kp.get("rss_total_peak_mb"):
                line += f", {kp['rss_total_peak_mb'] / ours['rss_total_peak_mb']:.1f}x whole-process peak RSS"
            print(line)
        if case in published:
            print(f"{'':24} published: {published[case]}")
    if not args.no_kafka_python:
        quality(50 if args.quick else args.quality)


if __name__ == "__main__":
    main()
