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
    """The summary's lines, the totals, then a table per section (skew; moves, hot keys and NULL keys
    when there are any), each a call of ``out``."""
    from kafka_placement.planning.summary import summarize, summary_lines

    sections: list[Callable[[], list[str]]] = [
        lambda: summary_lines(summary or summarize(result)),
        lambda: [_totals_line(result.totals)],
        lambda: _skew_section(result),
        lambda: _moved_section(result),
        lambda: _hot_keys_section(result, hot),
        lambda: _keyless_section(result),
    ]
    for section in sections:  # each printed as soon as it is made
        for text in section():
            out(text)


def _totals_line(t: dict[str, Any]) -> str:
    from kafka_placement.planning.summary import human_bytes

    return (
        f"\nrecords {t['records']:,}  distinct keys {t['keys']:,}  "
        f"bytes {t['bytes']:,} ({human_bytes(t['bytes'])})  "
        f"keyless (NULL key) records {t['keyless_records']:,}"
    )


def _skew_section(result: PlanResult) -> list[str]:
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
    return [
        "\nSkew per scenario (max/mean; 1.000 = perfectly even)",
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
        ),
    ]


def _moved_section(result: PlanResult) -> list[str]:
    if not len(result.moved):
        return []
    return [
        "\nMoved between partitionings",
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
        ),
    ]


def _hot_keys_section(result: PlanResult, hot: int) -> list[str]:
    if not (len(result.hot_keys) and hot):
        return []
    t = result.totals
    top = result.hot_keys.head(hot)
    hot_rows: list[list[Any]] = [
        [int(r["rank"]), r["key"], int(r["records"]), 100 * r["records_share"]]
        for r in top.to_dict("records")
    ]
    if t["keyless_records"]:  # NULL keys on their own row: not a key, but a load of its own
        share = 100 * t["keyless_records"] / t["records"]
        hot_rows.append(["-", "(NULL key)", t["keyless_records"], share])
    return [f"\nHottest {len(top)} keys", format_table(["rank", "key", "records", "share %"], hot_rows)]


def _keyless_section(result: PlanResult) -> list[str]:
    if not len(result.keyless):
        return []
    return [
        "\nNULL keys (and keys the scheme treats as keyless) per partitioning",
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
        ),
    ]
