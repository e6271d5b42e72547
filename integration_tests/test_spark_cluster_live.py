"""``kafka-placement plan`` and the Kafka writer on a real Spark standalone cluster whose executors do not
have our package.

A master and one worker are started on 127.0.0.1 with ``spark-class`` from the pyspark package; the
worker's Python is a separate venv with only pyspark, pyarrow, numpy and pandas (the versions of the
driver) — it plays the executors' machines. ``plan --master spark://…`` must ship the package, run there,
and give exactly the figures of the same plan on ``local[2]``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.spark]

EXECUTOR_PACKAGES = ("pyspark", "pyarrow", "numpy", "pandas")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def executor_python() -> str:
    """A venv without kafka_placement (cached under ~/.cache/kafka-placement, built with pip once)."""
    from importlib.metadata import version

    pins = [f"{name}=={version(name)}" for name in EXECUTOR_PACKAGES]
    tag = "-".join(p.replace("==", "") for p in pins) + f"-py{sys.version_info[0]}{sys.version_info[1]}"
    from kafka_placement.cache import cache_root

    venv = cache_root() / f"spark-executor-{tag}"
    python = venv / "bin" / "python"
    if not (venv / ".complete").exists():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *pins], check=True, timeout=900)
        (venv / ".complete").write_text(" ".join(pins))
    probe = subprocess.run([str(python), "-c", "import kafka_placement"], capture_output=True, text=True)
    assert probe.returncode != 0, "the executors' environment must not contain kafka_placement"
    return str(python)


@pytest.fixture(scope="module")
def standalone(executor_python: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import pyspark

    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    logs = tmp_path_factory.mktemp("spark-standalone")
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(logs),
        "SPARK_WORKER_DIR": str(logs / "work"),
        "PYSPARK_PYTHON": executor_python,
    }
    env.pop("PYTHONPATH", None)
    url = f"spark://127.0.0.1:{port}"
    with open(logs / "master.log", "w") as master_log, open(logs / "worker.log", "w") as worker_log:
        master = subprocess.Popen(
            [
                str(spark_class),
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(ui),
            ],
            env=env,
            stdout=master_log,
            stderr=subprocess.STDOUT,
        )
        worker = subprocess.Popen(
            [
                str(spark_class),
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                "2",
                "--memory",
                "2g",
                "--webui-port",
                str(worker_ui),
                url,
            ],
            env=env,
            stdout=worker_log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 90
        while "Registering worker" not in (logs / "master.log").read_text(errors="replace"):
            if time.monotonic() > deadline or master.poll() is not None or worker.poll() is not None:
                raise AssertionError(
                    "standalone cluster did not come up:\n"
                    + (logs / "master.log").read_text()[-2000:]
                    + (logs / "worker.log").read_text()[-2000:]
                )
            time.sleep(0.5)
        yield url
    finally:
        for proc in (worker, master):
            proc.terminate()
        for proc in (worker, master):
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def _plan(master: str, data: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "plugin")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "kafka_placement.cli",
            "plan",
            "--input",
            str(data),
            "--key-column",
            "key",
            "--value-column",
            "value",
            "--partitions",
            "6,12",
            "--schemes",
            "murmur2,jump",
            "--consumers",
            "3",
            "--output",
            str(out),
            "--master",
            master,
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _figures(out: Path) -> dict[str, object]:
    doc = json.loads((out / "plan.json").read_text())
    for volatile in ("timings", "spark", "generated_at", "source", "seconds"):
        doc.pop(volatile, None)
    return doc


def test_plan_on_a_standalone_cluster_without_the_package_equals_local(
    standalone: str, executor_python: str, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    keys = [f"user-{i % 997}".encode() if i % 50 else None for i in range(20_000)]
    values = [b"x" * (i % 300) for i in range(20_000)]
    data = tmp_path / "records.parquet"
    table = pa.table({"key": pa.array(keys, pa.binary()), "value": pa.array(values, pa.binary())})
    pq.write_table(table, data)

    local = _plan("local[2]", data, tmp_path / "local")
    assert local.returncode == 0, local.stderr[-3000:]
    started = time.monotonic()
    python_conf = f"spark.pyspark.python={executor_python}"
    remote = _plan(
        standalone, data, tmp_path / "cluster", "--conf", python_conf, "--conf", "spark.executor.memory=1g"
    )
    print(f"\nplan on the standalone cluster: {time.monotonic() - started:.1f}s end to end")
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert "Traceback" not in remote.stderr
    assert _figures(tmp_path / "cluster") == _figures(tmp_path / "local")


def test_executors_without_pyarrow_are_one_clear_error(standalone: str, tmp_path: Path) -> None:
    base = getattr(sys, "_base_executable", sys.executable)  # a Python 3.11 with none of the packages
    data = tmp_path / "k.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"key": pa.array([b"a", b"b"]), "value": pa.array([b"1", b"2"])}), data)
    started = time.monotonic()
    result = _plan(standalone, data, tmp_path / "out", "--conf", f"spark.pyspark.python={base}")
    assert result.returncode == 2, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1 and "lacks numpy, pyarrow, pandas" in lines[0], result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert time.monotonic() - started < 120


WRITER = """
import sys
from kafka_placement.spark.kafka_io import write_to_kafka
from kafka_placement.spark.partitioner_jar import add_java_partitioner
from kafka_placement.spark.session import spark_session

master, executor_python, bootstrap, topic = sys.argv[1:5]
spark = spark_session(master, conf={"spark.pyspark.python": executor_python, "spark.executor.memory": "1g"})
df = spark.range(0, 20000, 1, 4).selectExpr(
    "CASE WHEN id % 100 = 0 THEN NULL "
    "ELSE CAST(CONCAT('user-', CAST(id % 997 AS STRING)) AS BINARY) END AS key",
    "CAST(id AS STRING) AS value",
)
write_to_kafka(df, bootstrap, topic, 11, scheme="jump", native=True)
print("partitioner jar:", add_java_partitioner(spark))
spark.stop()
"""


def test_the_writer_on_a_standalone_cluster_places_records_by_our_java_partitioner(
    standalone: str, executor_python: str, kafka_cluster: Any
) -> None:
    """The executors' JVMs load our partitioner from the jar the driver compiled and served: every keyed
    record sits in jump's partition, the 200 NULL-key ones spread at random."""
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

    from kafka_placement.partitioning import partition_key
    from kafka_placement.testing.topics import create_topic

    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"spark-cluster-writer-{os.getpid()}"

    def admin_client() -> Any:
        return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="spark-cluster-live")

    admin = admin_client()
    try:
        create_topic(admin, topic, 11, 2, fresh_admin=admin_client)
    finally:
        admin.close()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "plugin")}
    run = subprocess.run(
        [sys.executable, "-c", WRITER, standalone, executor_python, bootstrap, topic],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "partitioner jar: " in run.stdout and run.stdout.strip().endswith(".jar"), run.stdout

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=3000)
    try:
        tps = [TopicPartition(topic, p) for p in range(11)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        got = [(r.partition, r.key) for r in consumer]
    finally:
        consumer.close()
    assert len(got) == 20000
    wrong = [(p, k) for p, k in got if k is not None and p != partition_key(k, 11, "jump")]
    assert wrong == []
    assert len({p for p, k in got if k is None}) >= 6  # keyless: random, not one partition
