# ruff: noqa: E501  (line formats and command lines read better whole)
"""cli/spark_start.py: commands that start Spark print only our lines unless ``--verbose``.

Each case runs the command in a subprocess, as a user would, and reads both of its terminal streams at
the file-descriptor level (where the JVM, Ivy and PySpark write). Spark starts cost 10-90 s on a loaded
machine, so the three input formats share one process (and one JVM): ``main()`` three times, as three
``kafka-placement plan`` commands would run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
from unit_tests.cli.terminal_lines import foreign_lines

import kafka_placement.cli.spark_start as spark_start
from kafka_placement.cli.spark_start import route_warnings

TIMEOUT_S = 1800  # a loaded 2-core machine has taken 335 s for one Spark start

THREE_PLANS = """
import sys
from kafka_placement.cli import main

tmp = sys.argv[1]
common = ["--key-column", "user", "--partitions", "6", "--master", "local[2]"]
codes = [
    main(["plan", "--input", f"{tmp}/in.parquet", "--value-column", "size", "--engine", "spark",
          "--output", f"{tmp}/o-parquet", *common]),
    main(["plan", "--input", f"{tmp}/in.csv", "--value-column", "size", "--output", f"{tmp}/o-csv", *common]),
    main(["plan", "--input", f"{tmp}/in.json", "--value-column", "size", "--output", f"{tmp}/o-json", *common]),
]
sys.exit(max(codes))
"""


def _inputs(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"user": [f"u{i % 23}" for i in range(400)], "size": [(i * 37) % 1000 for i in range(400)]}
    )
    frame.to_csv(tmp_path / "in.csv", index=False)
    frame.to_json(tmp_path / "in.json", orient="records", lines=True)
    frame.to_parquet(tmp_path / "in.parquet", index=False)


def _run(argv: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if k not in ("KAFKA_PLACEMENT_DEBUG", "PYSPARK_GATEWAY_PORT")
    }
    environment.update({"XDG_CACHE_HOME": str(tmp_path / "cache"), **env})
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path, env=environment
    )


def _logs(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "kafka-placement" / "logs").glob("spark-*.log"))


def test_warnings_of_our_package_are_our_lines_the_others_go_to_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "spark.log"
    with warnings.catch_warnings():  # restores the hook route_warnings installs
        warnings.simplefilter("always")
        route_warnings(log)
        pyspark_file = "/site-packages/pyspark/sql/pandas/utils.py"
        warnings.warn_explicit(
            "PySpark does not yet fully support pandas >= 3.0.0.", FutureWarning, pyspark_file, 63
        )
        warnings.warn_explicit(
            "the partition column is computed through Python", RuntimeWarning, spark_start.__file__, 1
        )
    captured = capsys.readouterr()
    assert captured.err == "warning: the partition column is computed through Python\n" and captured.out == ""
    assert (
        log.read_text()
        == f"{pyspark_file}:63: FutureWarning: PySpark does not yet fully support pandas >= 3.0.0.\n"
    )


@pytest.mark.spark
def test_plan_on_parquet_csv_and_json_prints_only_our_lines(tmp_path: Path) -> None:
    _inputs(tmp_path)
    proc = _run([sys.executable, "-c", THREE_PLANS, str(tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert foreign_lines(proc.stdout) == []
    assert foreign_lines(proc.stderr) == []
    for fmt in ("parquet", "csv", "json"):
        assert (tmp_path / f"o-{fmt}" / "plan.json").is_file()
        assert f"  reading {fmt}: " in proc.stderr or fmt == "parquet"
    assert proc.stdout.count("planned 1 scenario(s) in ") == 3
    assert proc.stderr.count("  planning 1 scenario(s) on Spark: done in ") == 3
    # our warning on its own line of stderr, whole
    warning = (
        "warning: CSV column 'size' holds only digits; it is counted as text of that length. "
        "If it is a size in bytes, use --value-size-column size"
    )
    assert warning in proc.stderr.splitlines()
    # what was not shown was kept: the JVM's start-up lines are in the log the start line names
    (log,) = _logs(tmp_path)
    assert f"its output: {log}" in proc.stderr
    kept = log.read_text(errors="replace")
    assert "log4j" in kept and "Using incubator modules" in kept


@pytest.mark.spark
def test_verbose_shows_spark_again_and_a_bad_setting_is_one_line_with_the_log(tmp_path: Path) -> None:
    _inputs(tmp_path)
    plan = [
        sys.executable,
        "-m",
        "kafka_placement.cli",
        "plan",
        "--input",
        str(tmp_path / "in.json"),
        "--key-column",
        "user",
        "--partitions",
        "6",
        "--master",
        "local[2]",
    ]
    verbose = _run([*plan, "--output", str(tmp_path / "o-verbose"), "--verbose"], tmp_path)
    assert verbose.returncode == 0, verbose.stderr[-3000:]
    shown = foreign_lines(verbose.stderr)
    assert any("log4j" in line for line in shown), verbose.stderr[-3000:]
    assert _logs(tmp_path) == []

    bad = _run(
        [*plan, "--output", str(tmp_path / "o-bad"), "--conf", "spark.executor.memory=banana"], tmp_path
    )
    assert bad.returncode == 2
    assert foreign_lines(bad.stderr) == [] and bad.stdout == ""
    errors = [line for line in bad.stderr.splitlines() if line.startswith("kafka-placement plan: error: ")]
    (log,) = _logs(tmp_path)
    assert errors == [
        "kafka-placement plan: error: Spark did not start: org.apache.spark.SparkException: "
        f"Executor memory must be a positive number (Spark's output: {log})"
    ]
    assert re.search(
        r"Exception in thread \"main\" .*Executor memory must be a positive number", log.read_text()
    )
