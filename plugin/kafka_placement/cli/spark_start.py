"""Spark for a subcommand: only our lines on the terminal unless ``--verbose``.

By default the JVM's own output (start-up lines, log4j, Ivy's resolution report, the Python workers'
stderr) goes to a log file in the cache directory (:mod:`kafka_placement.spark.jvm_output`), Python
warnings raised outside our package (PySpark's pandas check, py4j) are appended to the same file, and our
progress (:class:`~kafka_placement.cli.progress.Activity`) says what Spark is doing on the long steps. A
start that fails is one line with the cause and the file's path (exit 2). ``--verbose``, ``--debug`` or
``KAFKA_PLACEMENT_DEBUG=1``: everything on the terminal, as Spark prints it.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from kafka_placement.cli.progress import Activity, warning

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_OUR_PACKAGE = str(Path(__file__).resolve().parents[1]) + os.sep


def verbose(args: argparse.Namespace) -> bool:
    """Spark's own output on the terminal: ``--verbose``, ``--debug`` or ``KAFKA_PLACEMENT_DEBUG=1``."""
    from kafka_placement.cli import debug_requested

    return bool(getattr(args, "verbose", False) or getattr(args, "debug", False)) or debug_requested([])


def start_spark(args: argparse.Namespace, conf: dict[str, str], stream: TextIO | None = None) -> SparkSession:
    """The subcommand's SparkSession (``args.master``, ``conf``), started under an :class:`Activity`."""
    from kafka_placement.spark.jvm_output import gateway_running, new_log_path
    from kafka_placement.spark.session import spark_session

    log = None if verbose(args) or gateway_running() else new_log_path()
    if log is not None:
        route_warnings(log)
    master = args.master or conf.get("spark.master") or "deployment default"
    with Activity(f"starting Spark ({master})", stream) as activity:
        activity.note = f"its output: {log}" if log is not None else ""
        return spark_session(args.master, conf=conf, jvm_log=log)


def load_connector(spark: SparkSession, stream: TextIO | None = None) -> str:
    """Spark's Kafka connector added to ``spark``, under an :class:`Activity`; its coordinates."""
    from kafka_placement.spark.session import connector_remembered, ensure_kafka_connector

    how = "Ivy's cache" if connector_remembered() else "first time: Ivy, from Maven Central"
    with Activity(f"loading Spark's Kafka connector ({how})", stream) as activity:
        activity.note = ensure_kafka_connector(spark)
    return activity.note


def job_note(spark: SparkSession) -> str:
    """What the running Spark job is doing: its stages' tasks done (for :class:`Activity`'s ``poll``)."""
    tracker = spark.sparkContext.statusTracker()
    parts = []
    for stage_id in sorted(tracker.getActiveStageIds()):
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            parts.append(f"stage {stage_id}: {info.numCompletedTasks}/{info.numTasks} tasks")
    return ", ".join(parts)


def route_warnings(log: Path) -> None:
    """Python warnings raised in our package: ``warning: …`` lines on stderr; all others (PySpark's, py4j's,
    the libraries under them): appended to ``log``."""
    shown = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if str(Path(filename).resolve()).startswith(_OUR_PACKAGE):
            warning(str(message))
            return
        try:
            with log.open("a", encoding="utf-8") as sink:
                sink.write(warnings.formatwarning(message, category, filename, lineno, line))
        except OSError:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
