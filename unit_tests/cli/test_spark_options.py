"""cli/spark_options.py: --master/--conf/--spark-config, checked before Spark starts."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from kafka_placement.cli.spark_options import add_spark_arguments, spark_conf_from_args
from kafka_placement.errors import InvalidArgumentError


def _args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_spark_arguments(parser)
    return parser.parse_args(argv)


def test_conf_wins_over_the_file(tmp_path: Path) -> None:
    conf = tmp_path / "spark-defaults.conf"
    conf.write_text("# comment\nspark.driver.host   10.0.0.5\nspark.executor.memory=4g\n")
    args = _args(
        ["--spark-config", str(conf), "--conf", "spark.executor.memory=2g", "--conf", "spark.x.y=a=b"]
    )
    assert spark_conf_from_args(args) == {
        "spark.driver.host": "10.0.0.5",
        "spark.executor.memory": "2g",
        "spark.x.y": "a=b",
    }
    assert args.master is None  # the deployment's spark.master unless given


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--conf", "novalue"], "--conf expects KEY=VALUE"),
        (["--conf", "=x"], "--conf expects KEY=VALUE"),
        (["--conf", "executor.memory=1g"], "Spark settings start with 'spark.'"),
    ],
)
def test_bad_settings_are_refused(argv: list[str], message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        spark_conf_from_args(_args(argv))


def test_a_directory_is_not_a_config_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="is a directory"):
        spark_conf_from_args(_args(["--spark-config", str(tmp_path)]))
