"""What ``kafka-placement plan`` prints: the summary, totals and per-scenario tables of a plan."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka_placement.cli.tables import format_table

if TYPE_CHECKING:
    from kafka_placement.planning.result import PlanResult


def print_result(
    result: PlanResult,
    out: Callable[[str], None] = print,
    hot: int = 5,
    summary: dict[str, Any] | None = None,
) -> None:
    from kafka_placement.planning.summary import human_bytes, summarize, summary_lines

    t = result.totals
    for line in summary_lines(summary or summarize(result)):
        out(line)
    out(
        f"\nrecords {t['records']:,}  distinct keys {t['keys']:,}  "
        f"bytes {t['bytes']:,} ({human_bytes(t['bytes'])})  "
        f"keyless (NULL key) records {t['keyless_records']:,}"
    )
    rows = []
    for sc in result.scenarios.to_dict("records"):

        def m(level: str, measure: str, metric: str = "max_over_mean", sid: int = sc["scenario"]) -> float:
            return result.skew_of(sid, level, measure, metric)

        rows.append(
            [
                sc["scenario"],
                sc["partitioning"],
                sc["placement"],
                sc["group"],
                m("partition", "records"),
                m("partition", "records", "gini"),
                m("broker", "leader_bytes"),
                m("broker", "replica_bytes"),
                m("rack", "replica_bytes"),
                m("consumer", "bytes"),
            ]
        )
    out("\nSkew per scenario (max/mean; 1.000 = perfectly even)")
    out(
        format_table(
            [
                "#",
                "partitioning",
                "placement",
                "group",
                "partition",
                "part.gini",
                "broker lead",
                "broker repl",
                "rack",
                "consumer",
            ],
            rows,
        )
    )
    if len(result.moved):
        out("\nMoved between partitionings")
        out(
            format_table(
                ["from", "to", "keys", "keys %", "records %", "bytes %"],
                [
                    [
                        r["from"],
                        r["to"],
                        int(r["keys"]),
                        100 * r["keys_fraction"],
                        100 * r["records_fraction"],
                        100 * r["bytes_fraction"],
                    ]
                    for r in result.moved.to_dict("records")
                ],
            )
        )
    if len(result.hot_keys) and hot:
        top = result.hot_keys.head(hot)
        out(f"\nHottest {len(top)} keys")
        hot_rows: list[list[Any]] = [
            [int(r["rank"]), r["key"], int(r["records"]), 100 * r["records_share"]]
            for r in top.to_dict("records")
        ]
        if t["keyless_records"]:  # NULL keys on their own row: not a key, but a load of its own
            share = 100 * t["keyless_records"] / t["records"]
            hot_rows.append(["-", "(NULL key)", t["keyless_records"], share])
        out(format_table(["rank", "key", "records", "share %"], hot_rows))
    if len(result.keyless):
        out("\nNULL keys (and keys the scheme treats as keyless) per partitioning")
        out(
            format_table(
                ["partitioning", "NULL records", "empty-key records", "placed"],
                [
                    [
                        r["partitioning"],
                        int(r["null_records"]),
                        int(r["empty_key_records"]),
                        r["placed"] + (f" (partition {int(r['partition'])})" if r["partition"] >= 0 else ""),
                    ]
                    for r in result.keyless.to_dict("records")
                ],
            )
        )
