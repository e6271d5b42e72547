"""Getting our code onto a Spark cluster's executors, and checking they can run it.

Executors on other machines do not have ``kafka_placement`` installed. Before the first job we zip the
package's Python sources (the compiled C accelerator cannot load from a zip, so executors use the
numpy path: identical results, tested against each other) and add the zip with ``addPyFile``, which
every deployment supports (standalone, YARN, Kubernetes; Databricks/EMR: see docs/spark.md).

Then one tiny task reports the executor's Python, numpy, pyarrow and whether ``kafka_placement``
imports; a mismatch is one clear :class:`SparkEnvironmentError` instead of a task failing four times
with a traceback.
"""

from __future__ import annotations

import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_placement.errors import ClusterError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Files of the package that executors need (sources; the compiled accelerator cannot load from a zip).
_SHIPPED_SUFFIXES = (".py", ".pyi", ".typed")


class SparkEnvironmentError(ClusterError):
    """The Spark executors cannot run our code (Python version, missing pyarrow/numpy, no package)."""


def is_local_master(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


def build_package_zip(directory: Path | None = None) -> Path:
    """``kafka_placement-<version>.zip`` with the package's pure-Python sources, in ``directory``
    (a fresh temporary directory by default)."""
    import kafka_placement

    root = Path(kafka_placement.__file__).resolve().parent
    out_dir = directory or Path(tempfile.mkdtemp(prefix="kafka-placement-pyfiles-"))
    target = out_dir / f"kafka_placement-{kafka_placement.__version__}.zip"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if path.is_dir() or "__pycache__" in rel.parts:
                continue
            if path.suffix in _SHIPPED_SUFFIXES:
                archive.write(path, str(Path("kafka_placement") / rel))
    return target


def ship_package(spark: SparkSession) -> Path:
    """Add our package to the executors' Python path (``SparkContext.addPyFile``)."""
    archive = build_package_zip()
    spark.sparkContext.addPyFile(str(archive))
    return archive


def _probe(_: Any) -> dict[str, Any]:
    """Runs on an executor: what its Python environment has. Imports nothing of ours at module level
    of the task (the function itself is shipped by value)."""
    import importlib
    import sys as _sys

    found: dict[str, Any] = {"python": list(_sys.version_info[:2]), "executable": _sys.executable}
    for module in ("pyspark", "numpy", "pyarrow", "pandas", "kafka_placement"):
        try:
            imported = importlib.import_module(module)
            found[module] = getattr(imported, "__version__", "?")
            found[f"{module}_file"] = str(getattr(imported, "__file__", ""))
        except Exception as exc:  # reported, not raised: the driver explains it
            found[module] = None
            found[f"{module}_error"] = f"{type(exc).__name__}: {exc}"[:200]
    return found


def check_executors(spark: SparkSession) -> dict[str, Any]:
    """Run :func:`_probe` on one executor; :class:`SparkEnvironmentError` naming what is wrong."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]
    try:
        try:
            found = spark.sparkContext.parallelize([0], 1).map(_probe).collect()[0]
        finally:
            cloudpickle.unregister_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]
    except Exception as exc:
        text = str(exc)
        if "PYTHON_VERSION_MISMATCH" in text or "different version" in text:
            raise SparkEnvironmentError(
                f"the executors' Python is not the driver's {sys.version_info[0]}.{sys.version_info[1]}; set "
                "spark.pyspark.python (or PYSPARK_PYTHON on the workers) to a matching interpreter"
            ) from None
        first = next((line for line in text.splitlines() if line.strip()), text)[:300]
        raise SparkEnvironmentError(f"a first task on the executors failed: {first}") from None
    return check_probe(found)


def check_probe(found: dict[str, Any]) -> dict[str, Any]:
    """What :func:`_probe` reported, against the driver: :class:`SparkEnvironmentError` naming the
    first thing that does not match."""
    driver = list(sys.version_info[:2])
    if found["python"] != driver:
        raise SparkEnvironmentError(
            f"the executors run Python {found['python'][0]}.{found['python'][1]} ({found['executable']}), "
            f"the driver {driver[0]}.{driver[1]}; set spark.pyspark.python to a "
            f"{driver[0]}.{driver[1]} interpreter"
        )
    import pyspark

    theirs = found.get("pyspark")
    if theirs and theirs != "?" and theirs.split(".")[:2] != pyspark.__version__.split(".")[:2]:
        raise SparkEnvironmentError(
            f"the executors run pyspark {theirs}, the driver {pyspark.__version__}; use the same Spark "
            f"minor version on both sides (pip install 'pyspark=={pyspark.__version__}' on the workers)"
        )
    missing = [m for m in ("numpy", "pyarrow", "pandas") if found.get(m) is None]
    if missing:
        raise SparkEnvironmentError(
            f"the executors' Python ({found['executable']}) lacks {', '.join(missing)}: install "
            f"{' '.join(missing)} there (pip install 'kafka-placement[spark]' needs only these on executors)"
        )
    if found.get("kafka_placement") is None:
        raise SparkEnvironmentError(
            f"kafka_placement does not import on the executors: {found.get('kafka_placement_error')}"
        )
    return found
