"""``rebalance plan``: the load model in, the plan out (JSON on stdout; the table on stderr)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kafka_placement.cli.files import check_writable_dir
from kafka_placement.cli.reassign.common import with_log_dirs
from kafka_placement.cli.reassign.plan import parse_brokers
from kafka_placement.cli.tables import format_table
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.summary import human_bytes
from kafka_placement.replicas.loads import (
    Goals,
    LoadModel,
    RebalancePlan,
    parse_goals,
    parse_loads,
    plan_rebalance,
)
from kafka_placement.replicas.loads.model import RESOURCES, BrokerSpec
from kafka_placement.replicas.reassignment_json import format_reassignment
from kafka_placement.replicas.throttles import parse_rate

EMPTY_PLAN = '{"version":1,"partitions":[]}'


def parse_size(text: str | None) -> float | None:
    """``--max-bytes-moved``: a size like 10GB or 500MiB (``0``: leadership changes only)."""
    if text is None:
        return None
    if text.strip() in ("0", "0B", "0b"):
        return 0.0
    return float(parse_rate(text, "--max-bytes-moved"))


def load_model(args: argparse.Namespace) -> LoadModel:
    if args.loads:
        return parse_loads(Path(args.loads).read_text(encoding="utf-8"))
    if args.bootstrap_servers is None and not args.command_config:
        raise InvalidArgumentError("rebalance plan needs --loads FILE or --bootstrap-server")
    from kafka_placement.cli.rebalance.loads import read_live_model

    model, notes = read_live_model(args)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return model


def _check_arguments(args: argparse.Namespace) -> tuple[Goals, float | None, list[int], list[BrokerSpec]]:
    if args.loads and args.bootstrap_servers is not None:
        raise InvalidArgumentError("give --loads FILE or --bootstrap-server, not both")
    goals = Goals(
        soft=parse_goals(args.goals) if args.goals is not None else Goals().soft,
        band=args.band,
        capacity_threshold=args.capacity_threshold,
    )
    budget = parse_size(args.max_bytes_moved)
    remove = parse_brokers(args.remove_brokers)[0] if args.remove_brokers else []
    add: list[BrokerSpec] = []
    if args.add_brokers:
        ids, racks = parse_brokers(args.add_brokers)
        add = [BrokerSpec(b, racks.get(b)) for b in ids]
    if args.report:
        check_writable_dir(args.report, "--report")
    return goals, budget, remove, add


def run_plan(args: argparse.Namespace) -> int:
    goals, budget, remove, add = _check_arguments(args)
    model = load_model(args)
    plan = plan_rebalance(model, goals, max_bytes_moved=budget, remove_brokers=remove, add_brokers=add)
    changed = plan.changed()
    text = format_reassignment(with_log_dirs(changed, {})) if changed else EMPTY_PLAN
    summary = plan.summary()
    if args.report:
        from kafka_placement.cli.rebalance.report import write_rebalance_report

        path = write_rebalance_report(plan, summary, Path(args.report))
        print(f"report: {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True))
        return 0
    print(table_text(plan, summary), file=sys.stderr)
    print(text)
    return 0


def _pair(before: float, after: float, bytes_like: bool) -> str:
    if bytes_like:
        return f"{human_bytes(before)} → {human_bytes(after)}"
    return f"{before:,.0f} → {after:,.0f}"


def table_text(plan: RebalancePlan, summary: dict[str, Any]) -> str:
    """The per-broker before/after table, then one line per goal and the bytes against the bound."""
    headers = [
        "broker",
        "rack",
        "disk",
        "bytes in/s",
        "bytes out/s",
        "leader bytes in/s",
        "leaders",
        "moved in",
        "moved out",
    ]
    rows = []
    for b in summary["brokers"]:
        cells: list[Any] = [str(b["id"]) + (" (removed)" if b["removed"] else ""), b["rack"] or "-"]
        for r, name in enumerate(RESOURCES):
            cells.append(_pair(b["before"][name], b["after"][name], r < 4))
        cells += [human_bytes(b["bytes_moved_in"]), human_bytes(b["bytes_moved_out"])]
        rows.append(cells)
    lines = [format_table(headers, rows), ""]
    for name, status in summary["goals"].items():
        if name == "capacity":
            state = "met" if status["met"] else f"NOT met on brokers {status['brokers_outside']}"
            lines.append(f"capacity ≤ {status['threshold']:g} × capacity: {state}")
            continue
        if not status["goal"]:
            continue
        low, high = status["band"]
        shown = f"[{human_bytes(low)}, {human_bytes(high)}]" if name != "leaders" else f"[{low:g}, {high:g}]"
        state = (
            "met"
            if status["met"]
            else (
                f"NOT met (worst {status['worst_after']:.1%} of the mean outside, brokers "
                f"{status['brokers_outside'][:10]}; blocked by {status['blocked_by']})"
            )
        )
        lines.append(f"{name} within {shown}: {state}")
    bound = summary["lower_bound"]["bytes"]
    lines.append(
        f"bytes moved {human_bytes(summary['bytes_moved'])} (lower bound {human_bytes(bound)}"
        + (f", ratio {summary['bytes_moved_vs_bound']}" if bound else "")
        + f"); leader changes {summary['leader_changes']}; partitions changed {summary['partitions_changed']}"
    )
    lines += [f"problem: {p}" for p in summary["problems"]]
    return "\n".join(lines)
