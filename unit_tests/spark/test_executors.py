"""spark/executors.py and the session's master rules, without a cluster (the live proof is
integration_tests/test_spark_cluster_live.py)."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kafka_placement.spark.executors import _probe, build_package_zip, is_local_master
from kafka_placement.spark.session import is_loopback_master


def test_the_shipped_zip_holds_the_sources_and_imports_without_the_installed_package(tmp_path: Path) -> None:
    archive = build_package_zip(tmp_path)
    names = zipfile.ZipFile(archive).namelist()
    assert "kafka_placement/__init__.py" in names and "kafka_placement/partitioning/batch.py" in names
    assert not [n for n in names if n.endswith(".so") or "__pycache__" in n]
    # a Python that sees only the zip (isolated mode: no site-packages, no editable install)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import kafka_placement.partitioning as p; "
        "print(p.__file__); print(p.partition_keys([b'a', b'b'], 7).tolist())"
    )
    out = subprocess.run([sys.executable, "-I", "-c", code, str(archive)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    origin, hashed = out.stdout.splitlines()
    assert str(archive) in origin
    from kafka_placement.partitioning import partition_keys

    assert hashed == str(partition_keys([b"a", b"b"], 7).tolist())


def test_the_probe_reports_this_interpreter() -> None:
    found = _probe(0)
    assert found["python"] == list(sys.version_info[:2])
    assert found["pyarrow"] and found["numpy"] and found["kafka_placement"]


@pytest.mark.parametrize(
    ("master", "local", "loopback"),
    [
        ("local[*]", True, False),
        ("local", True, False),
        ("local-cluster[2,1,1024]", True, False),
        ("spark://127.0.0.1:7077", False, True),
        ("spark://localhost:7077", False, True),
        ("spark://10.1.2.3:7077", False, False),
        ("spark://127.0.0.1:7077,db1:7077", False, False),
        ("yarn", False, False),
        ("k8s://https://127.0.0.1:6443", False, False),
    ],
)
def test_master_kinds(master: str, local: bool, loopback: bool) -> None:
    assert is_local_master(master) is local
    assert is_loopback_master(master) is loopback


def _report(**changes: object) -> dict[str, object]:
    import pyspark

    found: dict[str, object] = {
        "python": list(sys.version_info[:2]),
        "executable": "/usr/bin/python3",
        "pyspark": pyspark.__version__,
        "numpy": "2",
        "pyarrow": "20",
        "pandas": "2",
        "kafka_placement": "0.1.0",
    }
    found.update(changes)
    return found


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"python": [3, 9]}, "the executors run Python 3.9 (/usr/bin/python3)"),
        ({"pyspark": "3.5.1"}, "the executors run pyspark 3.5.1"),
        ({"pyarrow": None, "pandas": None}, "lacks pyarrow, pandas"),
        ({"kafka_placement": None, "kafka_placement_error": "ModuleNotFoundError: x"}, "does not import"),
    ],
)
def test_a_mismatched_executor_is_one_clear_error(changes: dict[str, object], message: str) -> None:
    from kafka_placement.spark.executors import SparkEnvironmentError, check_probe

    with pytest.raises(SparkEnvironmentError, match=re.escape(message)):
        check_probe(_report(**changes))
    assert check_probe(_report()) == _report()
