"""``kafka-placement soak``: sustained load through our partitioners and failover/cooperative groups on
the embedded cluster (6 brokers on 3 racks; SASL_SSL with ``--security``) while brokers and members are
killed, paused and restarted on a schedule drawn from ``--seed``; then every invariant is checked.
``--profile full`` adds network faults (brokers cut off by iptables; slow, thin, reset, silent and
slow-closing client links through a Toxiproxy proxy per broker), the consumer-protocol and Java failover
groups, aiokafka producers, and a failover group moved from the classic to the consumer protocol member
by member during the load (its verdict needs the move completed).

Prints one verdict line; exit 0 only when every invariant held, 1 when one did not, 2 for bad input.
``--json FILE`` writes the summary (verdict, acknowledged, lost, duplicates, double_owned, misplaced,
Jepsen's nonmonotonic_polls / poll_skips / inconsistent_offsets, faults, failover_s, reassignment …);
``--report DIR`` an HTML timeline, the raw JSON-lines logs and each node's log.
A throttled reassignment (one broker drained of the topic, planned and applied by our ``reassign``
commands) is in flight during the load; the verdict needs it completed, its copies whole and every
acknowledged record read back from the topic afterwards.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kafka_placement.errors import ClusterError, InvalidArgumentError

MAX_MINUTES = 24 * 60


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "soak",
        help="fault-injection soak on the embedded cluster, with a verdict",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--minutes", type=float, required=True, help=f"minutes of load (0 < M <= {MAX_MINUTES})")
    p.add_argument(
        "--seed", type=int, required=True, help="seed of the fault schedule (same seed, same faults)"
    )
    p.add_argument(
        "--profile",
        choices=("quick", "full"),
        default="quick",
        help="quick: 20 records/s per producer, a fault every ~10 s; full: 50/s, every ~12 s, "
        "network faults (iptables partitions, root; Toxiproxy toxics), Java and "
        "consumer-protocol groups (a JDK), aiokafka producers, a rolling migration to the consumer protocol",
    )
    p.add_argument("--json", dest="json_file", help="write the summary as JSON to this file")
    p.add_argument("--report", help="write report.html, summary.json and the logs to this directory")
    p.add_argument("--security", action="store_true", help="run on the SASL_SSL cluster (SCRAM, TLS)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not 0 < args.minutes <= MAX_MINUTES:
        raise InvalidArgumentError(f"--minutes must be in (0, {MAX_MINUTES}], got {args.minutes}")
    if not 0 <= args.seed < 2**63:
        raise InvalidArgumentError(f"--seed must be in [0, 2**63), got {args.seed}")
    for option, value in (("--json", args.json_file), ("--report", args.report)):
        if value is not None and Path(value).exists() and option == "--json" and Path(value).is_dir():
            raise InvalidArgumentError(f"{option} {value!r} is a directory; give a file")
    from kafka_placement.cli.progress import Progress
    from kafka_placement.soak.coordinator_loads import coordinator_load_failures
    from kafka_placement.soak.report import write_report
    from kafka_placement.soak.runner import PROFILES, run_soak
    from kafka_placement.testing import KafkaCluster

    profile = PROFILES[args.profile]
    if any(c.startswith("java-") for members in profile.groups.values() for _n, c, _s, _p in members):
        from kafka_placement.soak.java_member import class_path

        class_path()  # built (or found built) before the cluster starts: no JDK is one line, exit 2
    cluster = KafkaCluster(
        security="sasl_ssl" if args.security else "plaintext",
        log=lambda msg: print(f"  {msg}", flush=True),
        fault_proxy=profile.proxied,
    )
    try:
        cluster.start()
    except ClusterError as exc:
        cluster.stop()
        raise ClusterError(f"could not start the embedded Kafka cluster: {exc}") from exc
    workdir = Path(tempfile.mkdtemp(prefix="kp-soak-"))
    progress = Progress("soak", 1000, unit="‰")
    try:
        summary, logs = run_soak(
            cluster,
            minutes=args.minutes,
            seed=args.seed,
            profile_name=args.profile,
            workdir=workdir,
            progress=lambda share, note: progress.update(int(share * 1000), note),
        )
        progress.finish(f"{summary['acknowledged']:,} records acknowledged")
        # Kafka's own coordinator failing to load a group's partition, named so that what its groups left
        # unconsumed is read as the broker's (soak/coordinator_loads.py)
        node_logs = cluster.node_logs()
        summary["coordinator_load_failures"] = [
            asdict(failure) for failure in coordinator_load_failures(node_logs)
        ]
        if args.json_file:
            Path(args.json_file).write_text(json.dumps(summary, indent=2) + "\n")
        if args.report:
            out = Path(args.report)
            write_report(summary, logs, out)
            # the logs, each member process's stderr (its client's warnings: why it left a group) and
            # librdkafka's statistics of the confluent members (fetch state per partition: why one stopped),
            # and the native stacks of the members the drain found stuck (soak/stacks.py)
            kinds = ("*.jsonl", "*.log", "*.stderr", "*.rdkstats", "*.stacks")
            for log in [path for kind in kinds for path in workdir.glob(kind)]:
                shutil.copy(log, out / log.name)
            # the brokers' own view (a group's coordinator, its assignor), before the cluster is removed
            cluster.write_logs(out / "cluster", logs=node_logs)
    finally:
        progress.close()
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(verdict_line(summary, args.seed))
    return 0 if summary["verdict"] == "held" else 1


def _outage_words(outages: dict[str, list[list[float]]]) -> str:
    """Group coordinators that could not answer (their __consumer_offsets partition had no leader)."""
    spans = [span for group_spans in outages.values() for span in group_spans]
    if not spans:
        return ""
    return f", {len(spans)} group-coordinator outage(s) (longest {max(span[2] for span in spans):.0f} s)"


def _load_failure_words(failures: list[dict[str, Any]]) -> str:
    """Kafka's group coordinator failing to load a __consumer_offsets partition (the broker's bug)."""
    return "".join(
        f", Kafka's group coordinator FAILED to load {f['partition']} {f['times']} time(s) "
        f"({f['first']} to {f['last']}, brokers {', '.join(map(str, f['brokers']))}"
        + (f"; groups {', '.join(f['groups'])}" if f["groups"] else "")
        + f": {f['cause'][:160]})"
        for f in failures
    )


def verdict_line(summary: dict[str, Any], seed: int) -> str:
    """The one line a run ends with: the verdict and every figure behind it."""
    from kafka_placement.soak.schedule import BROKER_KINDS, MEMBER_KINDS, NETWORK_KINDS

    fo = summary["failover_s"]
    faults = [f for f in summary["faults"] if f["kind"] in BROKER_KINDS + MEMBER_KINDS + NETWORK_KINDS]
    return (
        f"soak {summary['verdict']}: {summary['acknowledged']:,} acknowledged, {summary['lost']} lost, "
        f"{summary['duplicates']} duplicates, {summary['double_owned']} double-owned, "
        f"{summary['misplaced']} misplaced, {summary['standby_consumed']} standby-consumed, "
        f"{summary['nonmonotonic_polls']} nonmonotonic polls, {summary['poll_skips']} poll skips, "
        f"{summary['inconsistent_offsets']} inconsistent offsets, {len(faults)} faults, "
        f"{summary.get('stuck', 0)} stuck members, "
        f"failover p50/p99/max {fo['p50']}/{fo['p99']}/{fo['max']} s"
        + _bounded_failover_words(summary.get("failover_s_outside_outages"))
        + _stall_words(summary)
        + _reassignment_words(summary.get("reassignment"))
        + _migration_words(summary.get("migration"))
        + _outage_words(summary.get("coordinator_outages", {}))
        + _load_failure_words(summary.get("coordinator_load_failures", []))
        + f" (seed {seed})"
    )


def _stall_words(summary: dict[str, Any]) -> str:
    """Each stalled producer with the reason its client gave most often for the records it failed."""
    words = ""
    for name, gap in summary["stalled_producers"].items():
        words += f", producer {name} stalled {gap} s"
        reasons = summary.get("producers", {}).get(name, {}).get("failed_by") or {}
        if reasons:
            reason, count = max(reasons.items(), key=lambda item: item[1])
            words += f" ({count:,} failed: {reason})"
    return words


def _bounded_failover_words(entry: dict[str, Any] | None) -> str:
    """The failovers outside coordinator outages against their bound (session timeout + 3 s)."""
    if not entry or entry.get("bound") is None or entry.get("p99") is None:
        return ""
    verdict = "met" if entry["p99"] <= entry["bound"] else "NOT met"
    if entry.get("left_out"):
        return (
            f" ({entry['left_out']} inside coordinator outages; outside them p99 {entry['p99']} s, "
            f"bound {entry['bound']} s: {verdict})"
        )
    return f" (bound {entry['bound']} s: {verdict})"


def _migration_words(entry: dict[str, Any] | None) -> str:
    """The rolling migration in flight (full profile), in the verdict line."""
    if entry is None:
        return ""
    if entry["held"]:
        steps = ", ".join(f"{step['member']} (closed in {step['close_s']} s)" for step in entry["steps"])
        return f", {entry['group']} moved to the consumer protocol member by member: {steps}"
    return f", migration of {entry['group']} FAILED ({'; '.join(entry['problems'][:2])})"


def _reassignment_words(entry: dict[str, Any] | None) -> str:
    """The operation in flight, in the verdict line: what moved, how long it took, whether it held."""
    if entry is None:
        return ""
    if not entry.get("completed"):
        return f", reassignment FAILED ({entry.get('error', 'not completed')})"
    words = (
        f", reassignment of {entry.get('partitions_moved', 0)} partitions off broker "
        f"{entry['drained_broker']} in {entry.get('seconds')} s"
    )
    if not entry.get("copies_whole"):
        words += f" with copies not whole ({'; '.join(entry.get('copy_problems', [])[:2])})"
    if entry.get("throttles_left"):
        words += f", throttles left ({'; '.join(entry['throttles_left'][:2])})"
    if entry.get("missing_from_topic"):
        words += f", {entry['missing_from_topic']} acknowledged records missing from the topic"
    elif entry.get("readback") != "complete":
        words += f", topic read back {entry.get('readback')}"
    return words
