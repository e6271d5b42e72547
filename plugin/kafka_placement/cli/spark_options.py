"""The Spark options every Spark-running subcommand takes, in spark-submit's spelling.

``--master`` (default: the deployment's ``spark.master``, else ``local[*]``), repeatable
``--conf KEY=VALUE`` and ``--spark-config FILE`` (a ``spark-defaults.conf``-style properties file;
``--conf`` wins over it). They override our defaults and the deployment's own settings. ``--verbose``
shows Spark's own output (the JVM's start-up, log4j, Ivy, PySpark's warnings) on the terminal instead
of keeping it in a log file (:mod:`kafka_placement.cli.spark_start`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kafka_placement.errors import InvalidArgumentError

MAX_CONFIG_BYTES = 1024 * 1024


def add_spark_arguments(parser: Any, *, what: str = "") -> None:
    group = parser.add_argument_group("Spark (as spark-submit)")
    group.add_argument(
        "--master",
        default=None,
        help="Spark master: local[*], spark://host:7077, yarn, k8s://https://… "
        f"(default: spark.master of the deployment, else local[*]){what}",
    )
    group.add_argument(
        "--conf",
        dest="spark_conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one Spark setting (repeatable; wins over --spark-config and our defaults)",
    )
    group.add_argument(
        "--spark-config",
        metavar="FILE",
        help="Spark properties file (spark-defaults.conf format: 'key value' or key=value)",
    )
    group.add_argument(
        "--verbose",
        action="store_true",
        help="show Spark's own output (JVM start-up, log4j, Ivy, PySpark warnings) "
        "instead of keeping it in a log file (also KAFKA_PLACEMENT_DEBUG=1)",
    )


def spark_conf_from_args(args: argparse.Namespace) -> dict[str, str]:
    """The Spark settings of a command line: ``--spark-config`` then ``--conf`` (checked now, before
    Spark starts)."""
    import javaproperties

    conf: dict[str, str] = {}
    path = getattr(args, "spark_config", None)
    if path:
        p = Path(path)
        if p.is_dir():
            raise InvalidArgumentError(f"--spark-config {path!r} is a directory; give a properties file")
        data = p.read_bytes()  # a missing file: OSError, reported by the CLI as one line
        if len(data) > MAX_CONFIG_BYTES:
            raise InvalidArgumentError(f"--spark-config {path!r} is larger than {MAX_CONFIG_BYTES} bytes")
        conf.update(javaproperties.loads(data.decode("utf-8")))
    for item in getattr(args, "spark_conf", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidArgumentError(f"--conf expects KEY=VALUE, got {item!r:.80}")
        conf[key.strip()] = value
    for key in conf:
        if not key.startswith("spark."):
            raise InvalidArgumentError(f"Spark settings start with 'spark.', got {key!r:.80}")
    return conf
