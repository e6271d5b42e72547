"""``rebalance plan``: the load model in, the plan out (JSON on stdout; the table on stderr, table.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kafka_placement.cli.files import check_writable_dir
from kafka_placement.cli.reassign.common import with_log_dirs
from kafka_placement.cli.reassign.plan import parse_brokers
from kafka_placement.cli.rebalance.report import write_rebalance_report
from kafka_placement.cli.rebalance.table import table_text
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.replicas.loads import (
    Goals,
    LoadModel,
    parse_goals,
    parse_loads,
    plan_rebalance,
)
from kafka_placement.replicas.loads.model import BrokerSpec
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
        path = write_rebalance_report(plan, summary, Path(args.report))
        print(f"report: {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True))
        return 0
    print(table_text(plan, summary), file=sys.stderr)
    print(text)
    return 0
