"""Where ``kafka-placement plan`` plans: in this process or as a Spark job (``--engine``).

On one machine Spark adds a JVM, serialization and scheduling and nothing else, so ``auto`` plans
Parquet input the executors could read (string or binary key) in this process, one thread per local
core, when the master is local; any cluster master runs the Spark job (docs/spark.md, measured).
"""

from __future__ import annotations

import argparse
import os

from kafka_placement.errors import InvalidArgumentError


def choose_engine(args: argparse.Namespace, master: str | None, in_place: bool) -> int:
    """Threads for planning in this process, or 0 for Spark. ``--engine auto`` plans in this process when
    the input is Parquet read as it is (``in_place``: :func:`~kafka_placement.cli.plan_input.
    parquet_in_place`) and the master is local — given, or the default with no deployment configuration
    that could name another."""
    from kafka_placement.spark.executors import is_local_master

    engine = args.engine
    if engine == "spark":
        return 0
    if engine == "local" and not in_place:
        raise InvalidArgumentError(
            "--engine local plans Parquet input (--input) with a string or binary key column in the files "
            "and no --value-size-column; use --engine spark for this input"
        )
    if master is None and engine == "auto" and _deployment_may_name_a_master():
        return 0
    chosen = master or "local[*]"
    one_machine = is_local_master(chosen) and not chosen.startswith("local-cluster")
    if engine == "auto" and not (in_place and one_machine):
        return 0
    return local_threads(chosen if one_machine else "local[*]")


def local_threads(master: str) -> int:
    """Threads of the in-process engine for a local master: its cores, at most this machine's."""

    cores = os.cpu_count() or 1
    inside = master[master.find("[") + 1 : master.find("]")] if "[" in master else "1"
    return max(1, min(int(inside), cores)) if inside.isdigit() else cores


def _deployment_may_name_a_master() -> bool:
    """Under spark-submit, or with a spark-defaults.conf, the deployment may choose the master."""

    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        return True
    dirs = [os.environ.get("SPARK_CONF_DIR")]
    if os.environ.get("SPARK_HOME"):
        dirs.append(os.path.join(os.environ["SPARK_HOME"], "conf"))
    return any(d and os.path.isfile(os.path.join(d, "spark-defaults.conf")) for d in dirs)
