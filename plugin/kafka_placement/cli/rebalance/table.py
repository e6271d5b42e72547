"""What ``rebalance plan`` shows a person (on stderr, and atop the HTML report): the per-broker
before/after table, one line per goal, the bytes moved against the lower bound."""

from __future__ import annotations

from typing import Any

from kafka_placement.cli.tables import format_table
from kafka_placement.planning.summary import human_bytes
from kafka_placement.replicas.loads import RebalancePlan
from kafka_placement.replicas.loads.model import RESOURCES


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
        if "line" in status:  # a placement goal describes itself
            lines.append(status["line"])
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
