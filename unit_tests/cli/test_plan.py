"""``kafka-placement plan`` in-process: clear errors (exit 2) before Spark starts, files on success."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from kafka_placement.cli import main
from kafka_placement.partitioning import partition_keys


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sample", "10", "--schemes", "murmur3"], "unknown partitioning scheme 'murmur3'"),
        (
            ["--sample", "10", "--placers", "best"],
            "unknown replica placer 'best'; allowed: adminutils, striped",
        ),
        (["--sample", "10", "--assignors", "fastest"], "unknown assignment strategy 'fastest'"),
        (["--sample", "10", "--partitions", "12,x"], "--partitions must be comma-separated integers"),
        (["--sample", "10", "--partitions", "0"], "partition count 0 is out of range [1, 100000]"),
        (["--sample", "10", "--rf", "9"], "replication factor 9 is out of range [1, 6] for 6 brokers"),
        (["--sample", "0"], "sample size must be an int in [1, 1,000,000,000], got 0"),
        ([], "give exactly one input: --sample N, --input PATH or --topic T (got none)"),
        (["--sample", "5", "--input", "x.csv"], "(got --sample, --input)"),
        (["--input", "/nonexistent/keys.parquet"], "input path '/nonexistent/keys.parquet' does not exist"),
        (["--topic", "t"], "--topic needs --bootstrap-servers host:port"),
        (
            ["--topic", "t", "--bootstrap-servers", "127.0.0.1:1"],
            "cannot connect to 127.0.0.1:1 (PLAINTEXT): connection refused",
        ),
        (
            ["--topic", "t", "--bootstrap-servers", "nohost"],
            "bootstrap server 'nohost' is not host:port with a port in [1, 65535]",
        ),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(["plan", *argv], capsys)
    assert code == 2
    assert err.startswith("kafka-placement plan: error: ")
    assert message in err
    assert "Traceback" not in err


def test_unknown_format_suffix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "keys.txt"
    path.write_text("k\n")
    code, _, err = run(["plan", "--input", str(path)], capsys)
    assert code == 2
    assert "cannot tell the format of" in err and "pass --format parquet/csv/json" in err


@pytest.mark.spark
def test_missing_column_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "events.csv"
    pd.DataFrame({"user": ["a", "b"], "size": [1, 2]}).to_csv(path, index=False)
    code, _, err = run(
        ["plan", "--input", str(path), "--key-column", "customer", "--output", str(tmp_path / "o")], capsys
    )
    assert code == 2
    assert "key column 'customer' is not in the input; available columns: user, size" in err


@pytest.mark.spark
def test_csv_input_plans_and_writes_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    users = [f"customer-{i % 37}" for i in range(900)]
    path = tmp_path / "events.csv"
    pd.DataFrame({"user": users, "payload": ["p" * (i % 50) for i in range(900)]}).to_csv(path, index=False)
    out_dir = tmp_path / "out"
    code, out, err = run(
        [
            "plan",
            "--input",
            str(path),
            "--key-column",
            "user",
            "--value-column",
            "payload",
            "--partitions",
            "5,8",
            "--schemes",
            "murmur2,fnv1a",
            "--placers",
            "adminutils,balanced",
            "--assignors",
            "range,sticky",
            "--consumers",
            "2",
            "--output",
            str(out_dir),
        ],
        capsys,
    )
    assert code == 0, err
    assert "Skew per scenario" in out and "Moved between partitionings" in out and "Hottest 5 keys" in out
    assert f"report: {out_dir / 'report.html'}" in out
    doc = json.loads((out_dir / "plan.json").read_text())
    assert len(doc["scenarios"]) == 2 * 2 * 2 * 2
    parts = pd.read_parquet(out_dir / "partitions.parquet")
    for n in (5, 8):
        for scheme in ("murmur2", "fnv1a"):
            expected = Counter(partition_keys([u.encode() for u in users], n, scheme).tolist())
            got = parts[parts["partitioning"] == f"{scheme}/{n}"]["records"].tolist()
            assert got == [expected.get(p, 0) for p in range(n)]


def test_value_sizes_are_exact_on_csv_json_and_parquet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    users = [f"u{i % 23}" for i in range(400)]
    sizes = [(i * 37) % 1000 for i in range(400)]
    frame = pd.DataFrame({"user": users, "size": sizes})
    frame.to_csv(tmp_path / "in.csv", index=False)
    frame.to_json(tmp_path / "in.json", orient="records", lines=True)
    frame.to_parquet(tmp_path / "in.parquet", index=False)
    # independent: per partition, sum of len(key) + size
    placed = partition_keys([u.encode() for u in users], 6, "murmur2").tolist()
    expected = [
        sum(len(u) + s for u, s, p in zip(users, sizes, placed, strict=True) if p == q) for q in range(6)
    ]
    for name, value_args in (
        ("in.csv", ["--value-size-column", "size"]),
        ("in.json", ["--value-column", "size"]),
        ("in.parquet", ["--value-column", "size"]),
        ("in.parquet", ["--value-column", "size", "--engine", "spark"]),
    ):
        out_dir = tmp_path / f"out-{name}-{len(value_args)}"
        code, _, err = run(
            [
                "plan",
                "--input",
                str(tmp_path / name),
                "--key-column",
                "user",
                *value_args,
                "--partitions",
                "6",
                "--schemes",
                "murmur2",
                "--output",
                str(out_dir),
            ],
            capsys,
        )
        assert code == 0, err
        parts = pd.read_parquet(out_dir / "partitions.parquet")
        assert parts["bytes"].tolist() == expected, name


def test_a_csv_size_column_given_as_the_value_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pd.DataFrame({"user": ["a", "b"], "size": [512, 1024]}).to_csv(tmp_path / "in.csv", index=False)
    code, _, err = run(
        [
            "plan",
            "--input",
            str(tmp_path / "in.csv"),
            "--key-column",
            "user",
            "--value-column",
            "size",
            "--partitions",
            "3",
            "--output",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 0 and "use --value-size-column size" in err
    pd.DataFrame({"user": ["a"], "size": ["big"]}).to_csv(tmp_path / "bad.csv", index=False)
    code, _, err = run(
        [
            "plan",
            "--input",
            str(tmp_path / "bad.csv"),
            "--key-column",
            "user",
            "--value-size-column",
            "size",
            "--partitions",
            "3",
            "--output",
            str(tmp_path / "o2"),
        ],
        capsys,
    )
    assert code == 2 and "must hold whole numbers of bytes, got 'big'" in err


def test_parquet_on_a_local_master_is_planned_without_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pd.DataFrame({"user": [f"u{i % 7}" for i in range(70)]}).to_parquet(tmp_path / "in.parquet", index=False)
    code, _, err = run(
        [
            "plan",
            "--input",
            str(tmp_path / "in.parquet"),
            "--key-column",
            "user",
            "--partitions",
            "4",
            "--master",
            "local[2]",
            "--output",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 0, err
    assert "planning in this process with 2 thread(s)" in err and "starting Spark" not in err
    placed = Counter(partition_keys([f"u{i % 7}".encode() for i in range(70)], 4, "murmur2").tolist())
    parts = pd.read_parquet(tmp_path / "o" / "partitions.parquet")
    assert parts["records"].tolist() == [placed.get(p, 0) for p in range(4)]


def test_engine_local_refuses_input_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pd.DataFrame({"user": ["a"], "size": [1]}).to_csv(tmp_path / "in.csv", index=False)
    pd.DataFrame({"user": [1, 2]}).to_parquet(tmp_path / "ints.parquet", index=False)
    for name in ("in.csv", "ints.parquet"):
        code, _, err = run(
            [
                "plan",
                "--input",
                str(tmp_path / name),
                "--key-column",
                "user",
                "--engine",
                "local",
                "--output",
                str(tmp_path / "o"),
            ],
            capsys,
        )
        assert code == 2 and err.count("\n") == 1, err
        assert "--engine local plans Parquet input (--input) with a string or binary key column" in err


@pytest.mark.parametrize(
    ("master", "env", "threads"),
    [
        ("local[2]", {}, 2),
        ("local", {}, 1),
        ("local[*]", {}, "cores"),
        ("local[64000]", {}, "cores"),
        (None, {}, "cores"),
        (None, {"PYSPARK_GATEWAY_PORT": "1"}, 0),  # under spark-submit: the deployment names the master
        ("spark://127.0.0.1:7077", {}, 0),
        ("yarn", {}, 0),
        ("local-cluster[2,1,1024]", {}, 0),
    ],
)
def test_auto_engine_plans_in_process_only_on_one_machine(
    master: str | None,
    env: dict[str, str],
    threads: int | str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import argparse
    import os

    from kafka_placement.cli.plan_engine import choose_engine
    from kafka_placement.cli.plan_input import parquet_in_place

    for name in ("PYSPARK_GATEWAY_PORT", "SPARK_CONF_DIR", "SPARK_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    pd.DataFrame({"key": ["a"]}).to_parquet(tmp_path / "in.parquet", index=False)
    args = argparse.Namespace(
        engine="auto",
        input=str(tmp_path / "in.parquet"),
        format=None,
        key_column="key",
        value_column=None,
        value_size_column=None,
    )
    in_place = parquet_in_place(args)
    assert in_place
    assert choose_engine(args, master, in_place) == (os.cpu_count() if threads == "cores" else threads)
    args.engine = "spark"
    assert choose_engine(args, master, in_place) == 0
