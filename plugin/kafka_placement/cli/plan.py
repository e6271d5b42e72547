"""``kafka-placement plan``: the Spark planning pipeline from the command line.

Input: ``--sample N`` (Zipf-skewed generated keys), ``--input PATH`` (Parquet/CSV/JSON file or
directory) or ``--topic T --bootstrap-servers S`` (Spark's Kafka source). Scenarios are the
product of ``--partitions`` × ``--schemes`` × ``--placers`` × ``--assignors``/``--consumers``.
Prints terminal tables and writes ``OUTPUT/report.html`` (+ PNG plots), ``plan.json`` and Parquet.
``--engine``: Parquet input on a local master is planned in this process (no JVM; the same figures),
anything else by the Spark job (:mod:`kafka_placement.cli.plan_engine`); the input is read by
:mod:`kafka_placement.cli.plan_input`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from kafka_placement.cli.connection_options import (
    add_connection_arguments,
    has_connection,
    settings_from_args,
)
from kafka_placement.cli.files import check_writable_dir
from kafka_placement.cli.plan_engine import choose_engine
from kafka_placement.cli.plan_input import FORMATS, check_topic, infer_format, load_input, parquet_in_place
from kafka_placement.cli.plan_output import print_result
from kafka_placement.cli.spark_options import add_spark_arguments, spark_conf_from_args
from kafka_placement.errors import InvalidArgumentError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from kafka_placement.planning.result import PlanResult
    from kafka_placement.planning.scenarios import Scenario


def _int_list(text: str, what: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InvalidArgumentError(f"{what} must be comma-separated integers, got {text!r}") from None
    if not values:
        raise InvalidArgumentError(f"{what} must name at least one value, got {text!r}")
    return values


def _names(text: str) -> list[str]:
    return list(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "plan",
        help="plan partitions/brokers/racks/consumers over key data on Spark; HTML report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = p.add_argument_group("input (one of)")
    src.add_argument("--sample", type=int, metavar="N", help="generate N Zipf-skewed sample records")
    src.add_argument("--input", metavar="PATH", help="Parquet/CSV/JSON file or directory")
    src.add_argument("--format", choices=FORMATS, help="input format (default: from the file suffix)")
    src.add_argument("--topic", help="read this topic with Spark's Kafka source")
    src.add_argument("--key-column", default="key", help="key column (default: key)")
    src.add_argument(
        "--value-column",
        help="value column: bytes/string (its length) or a numeric size (default: value_size for --sample, "
        "value for --topic, none for files)",
    )
    src.add_argument(
        "--value-size-column",
        help="column holding each record's value size in bytes (a number, also when a CSV gives it as text); "
        "instead of --value-column",
    )
    add_connection_arguments(p, timeout=False, help_suffix=" (for --topic)")
    smp = p.add_argument_group("sample")
    smp.add_argument("--distinct-keys", type=int, default=0, help="distinct keys (default records/20, >=100)")
    smp.add_argument("--zipf", type=float, default=1.1, help="Zipf exponent of key popularity (default 1.1)")
    smp.add_argument("--value-size", type=int, default=512, help="mean value size in bytes (default 512)")
    smp.add_argument("--seed", type=int, default=42, help="sample and placer seed (default 42)")
    sc = p.add_argument_group("scenarios")
    sc.add_argument("--partitions", default="12", help="partition counts, e.g. 12,16 (default 12)")
    sc.add_argument(
        "--schemes", default="murmur2", help="partitioner schemes, e.g. murmur2,jump (default murmur2)"
    )
    sc.add_argument(
        "--brokers",
        default="0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1",
        help="brokers as id:rack list, or a count for rack-less brokers (default: the embedded cluster)",
    )
    sc.add_argument("--rf", type=int, default=3, help="replication factor (default 3)")
    sc.add_argument("--placers", default="adminutils", help="replica placers: adminutils,striped,balanced")
    sc.add_argument("--consumers", default="3", help="consumer counts, e.g. 3,6 (default 3)")
    sc.add_argument(
        "--assignors", default="range", help="assignors: range,roundrobin,sticky,cooperative-sticky,failover"
    )
    sc.add_argument(
        "--rack-aware", action="store_true", help="give consumers racks (KIP-881 rack-aware assignment)"
    )
    out = p.add_argument_group("output")
    out.add_argument(
        "--output", default="kafka-placement-plan", help="output directory (default ./kafka-placement-plan)"
    )
    out.add_argument("--top-keys", type=int, default=20, help="hot keys to report (default 20)")
    out.add_argument(
        "--period",
        type=float,
        metavar="SECONDS",
        help="how long the input covers, in seconds: the summary then gives records/s and MB/s",
    )
    add_spark_arguments(p)
    p.add_argument(
        "--engine",
        choices=("auto", "spark", "local"),
        default="auto",
        help="where to plan: spark (the Spark job), local (this process, one thread per local core; Parquet "
        "input with a string/binary key column), auto (default: local for such input on a local master, "
        "else spark)",
    )
    p.set_defaults(handler=run)


def build_scenarios(args: argparse.Namespace) -> list[Scenario]:
    """Validate the scenario options (before Spark starts) and return the grid."""
    from kafka_placement.planning.scenarios import Group, Placement, parse_brokers, scenario_grid

    brokers = parse_brokers(args.brokers)
    placements = [Placement(brokers, args.rf, placer, args.seed) for placer in _names(args.placers)]
    groups = [
        Group(n, assignor, args.rack_aware)
        for assignor in _names(args.assignors)
        for n in _int_list(args.consumers, "--consumers")
    ]
    return scenario_grid(_int_list(args.partitions, "--partitions"), _names(args.schemes), placements, groups)


def run_plan(
    spark: SparkSession | None,
    data: DataFrame | Path,
    scenarios: Sequence[Scenario],
    *,
    key_column: str,
    value_column: str | None,
    output: Path,
    source: str,
    top_keys: int = 20,
    period_s: float | None = None,
    threads: int = 1,
    out: Callable[[str], None] = print,
    status: TextIO | None = None,
) -> PlanResult:
    """Plan ``data`` — a DataFrame, or Parquet files read by Spark's executors or, with no ``spark``, by
    ``threads`` threads of this process — print the tables, write results and the report (shared by
    ``plan`` and ``demo``). ``status``: where the Spark job's progress goes (default stderr)."""
    from kafka_placement.planning.report import write_report, write_results
    from kafka_placement.planning.summary import summarize
    from kafka_placement.spark.parquet_plan import plan_parquet
    from kafka_placement.spark.pipeline import plan

    started = time.monotonic()
    if spark is None:
        if not isinstance(data, Path):
            raise TypeError("planning in this process takes Parquet files, not a DataFrame")
        from kafka_placement.planning.local import plan_parquet as plan_in_process

        result = plan_in_process(
            data,
            scenarios,
            key_column=key_column,
            value_column=value_column,
            top_keys=top_keys,
            threads=threads,
        )
    else:
        from kafka_placement.cli.progress import Activity
        from kafka_placement.cli.spark_start import job_note

        columns: dict[str, Any] = {"key_column": key_column, "value_column": value_column}
        columns["top_keys"] = top_keys
        label = f"planning {len(scenarios)} scenario(s) on Spark"
        with Activity(label, status, poll=lambda: job_note(spark)):
            if isinstance(data, Path):
                result = plan_parquet(spark, data, scenarios, **columns)
            else:
                result = plan(spark, data, scenarios, **columns)
    summary = summarize(result, period_s)
    print_result(result, out, summary=summary)
    write_results(result, output, summary)
    report = write_report(result, output, source=source, summary=summary)
    out(f"\nplanned {len(scenarios)} scenario(s) in {time.monotonic() - started:.1f}s")
    out(f"report: {report}")
    out(f"results: {output / 'plan.json'} and {output}/*.parquet")
    return result


def check_input_args(args: argparse.Namespace) -> None:
    """Everything about the input that can be checked before Spark starts."""
    chosen = [name for name in ("sample", "input", "topic") if getattr(args, name) is not None]
    if len(chosen) != 1:
        raise InvalidArgumentError(
            "give exactly one input: --sample N, --input PATH or --topic T "
            f"(got {', '.join('--' + c for c in chosen) or 'none'})"
        )
    if args.value_size_column is not None:
        if args.value_column is not None:
            raise InvalidArgumentError("give --value-column (the value) or --value-size-column, not both")
        if args.input is None:
            raise InvalidArgumentError("--value-size-column reads a column of --input files")
    if args.sample is not None:
        from kafka_placement.spark.sample import SampleSpec

        SampleSpec(
            args.sample, args.distinct_keys, args.zipf, args.value_size, min(16, args.value_size), args.seed
        )
    if args.input is not None:
        path = Path(args.input)
        if not path.exists():
            raise InvalidArgumentError(f"input path {str(path)!r} does not exist")
        if args.format is None:
            infer_format(path)
    if args.topic is not None:
        if not has_connection(args):
            raise InvalidArgumentError("--topic needs --bootstrap-servers host:port")
        check_topic(settings_from_args(args), args.topic)
    if not 0 <= args.top_keys <= 10_000:
        raise InvalidArgumentError(f"--top-keys must be in [0, 10000], got {args.top_keys}")
    if args.period is not None and not 0 < args.period <= 10 * 365 * 86400:
        raise InvalidArgumentError(f"--period must be in (0, 315360000] seconds, got {args.period:g}")
    check_writable_dir(args.output, "--output")


def run(args: argparse.Namespace) -> int:
    scenarios = build_scenarios(args)
    check_input_args(args)
    spark_conf = spark_conf_from_args(args)
    master = args.master or spark_conf.get("spark.master")
    in_place = parquet_in_place(args)
    threads = choose_engine(args, master, in_place)
    common: dict[str, Any] = {
        "key_column": args.key_column,
        "output": Path(args.output),
        "top_keys": args.top_keys,
        "period_s": args.period,
    }
    if threads:
        print(
            f"planning in this process with {threads} thread(s) (Parquet input, local master: Spark "
            "would add a JVM and nothing else on one machine; --engine spark to run the Spark job) …",
            file=sys.stderr,
        )
        path = Path(args.input)
        run_plan(
            None,
            path,
            scenarios,
            value_column=args.value_column,
            source=f"parquet: {path}",
            threads=threads,
            **common,
        )
        return 0
    from kafka_placement.cli.spark_start import start_spark

    spark = start_spark(args, spark_conf)
    data, source, value_column = load_input(spark, args, in_place)
    run_plan(spark, data, scenarios, value_column=value_column, source=source, **common)
    return 0
