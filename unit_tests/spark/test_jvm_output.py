"""spark/jvm_output.py: the cause of a failed start, from what the JVM printed; a bounded log directory.

The JVM lines below are copied from real failed starts of ``spark-submit`` (PySpark 4.3, OpenJDK 17):
``--conf spark.driver.memory=banana`` (the JDK refuses the heap size) and ``--conf
spark.executor.memory=banana`` (Spark's argument check). The live path is
unit_tests/cli/test_spark_start.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_placement.spark import jvm_output
from kafka_placement.spark.jvm_output import KEEP_LOGS, first_cause, new_log_path, start_failure

HEAP = [
    "Invalid maximum heap size: -Xmxbanana",
    "Error: Could not create the Java Virtual Machine.",
    "Error: A fatal exception has occurred. Program will exit.",
]
EXECUTOR = [
    "WARNING: Using incubator modules: jdk.incubator.vector",
    "Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties",
    "26/11/26 13:49:51 WARN Utils: Set SPARK_LOCAL_IP if you need to bind to another address",
    'Exception in thread "main" org.apache.spark.SparkException: Executor memory must be a positive number',
    "\tat org.apache.spark.deploy.SparkSubmitArguments.error(SparkSubmitArguments.scala:670)",
]


def test_the_cause_is_the_first_line_that_says_what_failed() -> None:
    assert first_cause(HEAP) == "Invalid maximum heap size: -Xmxbanana"
    assert first_cause(EXECUTOR) == (
        "org.apache.spark.SparkException: Executor memory must be a positive number"
    )
    assert first_cause(EXECUTOR[:3]) is None


def test_a_failure_names_the_cause_and_the_log(tmp_path: Path) -> None:
    log = tmp_path / "spark.log"
    log.write_text("\n".join(EXECUTOR) + "\n")
    error = start_failure(RuntimeError("[JAVA_GATEWAY_EXITED] Java gateway process exited"), log)
    assert str(error) == (
        "Spark did not start: org.apache.spark.SparkException: Executor memory must be a "
        f"positive number (Spark's output: {log})"
    )
    assert "JAVA_GATEWAY_EXITED" in log.read_text()  # the Python side's view is kept with the JVM's
    # a Py4J error carries the Java exception after ': ' — that is the cause, whatever the log holds
    py4j = RuntimeError("An error occurred while calling None.JavaSparkContext.\n: java.lang.Bad: no\n\tat x")
    assert str(start_failure(py4j, None)) == "Spark did not start: java.lang.Bad: no"


def test_the_log_directory_keeps_a_bounded_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jvm_output, "log_dir", lambda: tmp_path)
    for i in range(KEEP_LOGS + 5):
        old = tmp_path / f"spark-old-{i:03d}.log"
        old.write_text("x")
        os.utime(old, (1000 + i, 1000 + i))
    path = new_log_path()
    path.write_text("new")
    kept = sorted(p.name for p in tmp_path.glob("spark-*.log"))
    assert len(kept) == KEEP_LOGS and path.name in kept
    assert "spark-old-000.log" not in kept and f"spark-old-{KEEP_LOGS + 4:03d}.log" in kept
