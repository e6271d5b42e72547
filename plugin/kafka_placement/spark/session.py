"""A light local Spark session and Spark's Kafka connector, resolved through Ivy from Maven Central.

Start-up is kept small for laptops and 2-core CI machines: the UI is off, shuffles use a handful of
partitions, the driver gets modest memory and binds to loopback only. ``master`` is passed through,
so the same job runs on a cluster (``--master spark://…``, ``yarn``, ``k8s://…``).

The Kafka connector (``org.apache.spark:spark-sql-kafka-0-10_2.13``) is added to the running session
with ``ADD JAR ivy://…`` — Spark's own Ivy resolver, from Maven Central, cached in ``~/.ivy2*`` so a
second run is offline. The installed PySpark version is tried first. When a repository does not
serve that exact version (a mirror lagging behind PyPI), the newest older connector of the same
major version is used, and if its ``spark-token-provider-kafka-0-10`` dependency is missing too, the
newest one that resolves; :func:`ensure_kafka_connector` returns what it loaded so it can be reported,
and remembers the working Ivy URIs in ``~/.cache/kafka-placement/spark-kafka-connector.json`` so
later sessions resolve them first (no failed attempts logged again).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_placement.errors import ClusterError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCALA_BINARY = "2.13"
CONNECTOR = f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY}"
TOKEN_PROVIDER = f"org.apache.spark:spark-token-provider-kafka-0-10_{SCALA_BINARY}"
#: Environment override: comma-separated connector versions to try, in order.
VERSION_ENV = "KAFKA_PLACEMENT_SPARK_KAFKA_VERSIONS"

DEFAULT_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.driver.memory": "1g",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "262144",
    "spark.sql.session.timeZone": "UTC",
    "spark.python.worker.reuse": "true",
}

_connector_loaded: dict[int, str] = {}


def spark_session(
    master: str = "local[*]", app_name: str = "kafka-placement", conf: dict[str, str] | None = None
) -> SparkSession:
    """Get or create a SparkSession with light defaults (``conf`` overrides them)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers must be this interpreter (with kafka_placement importable), not whatever
    # "python3" is first on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # PySpark 4.x warns on every pandas conversion that it does not "fully support" pandas 3; the
    # Arrow paths used here (mapInArrow, toPandas of small aggregates) are covered by our tests.
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    from pyspark.sql import SparkSession

    builder: Any = SparkSession.builder.master(master).appName(app_name)
    for key, value in {**DEFAULT_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark: SparkSession = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _candidate_versions(installed: str) -> list[str]:
    override = os.environ.get(VERSION_ENV, "").strip()
    if override:
        return [v.strip() for v in override.split(",") if v.strip()]
    base = installed.split("+")[0].split(".dev")[0]
    parts = base.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return [base]
    versions = [base]
    versions += [f"{major}.{m}.0" for m in range(minor - 1, -1, -1)]
    return list(dict.fromkeys(versions))


def _memo_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-placement" / "spark-kafka-connector.json"


def _remembered(pyspark_version: str) -> dict[str, Any] | None:
    """The Ivy URIs that resolved last time for this PySpark (so no failing attempt is logged again)."""
    if os.environ.get(VERSION_ENV):
        return None
    try:
        memo = json.loads(_memo_path().read_text(encoding="utf-8"))
        entry = memo.get(pyspark_version)
    except (OSError, ValueError, AttributeError):
        return None
    if isinstance(entry, dict) and isinstance(entry.get("uris"), list):
        return entry
    return None


def _remember(pyspark_version: str, uris: list[str], coordinates: str) -> None:
    path = _memo_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        memo = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        memo[pyspark_version] = {"uris": uris, "coordinates": coordinates}
        path.write_text(json.dumps(memo, indent=1) + "\n", encoding="utf-8")
    except (OSError, ValueError):
        pass  # only an optimisation


def _add_jar(spark: SparkSession, uri: str) -> bool:
    try:
        spark.sql(f"ADD JAR '{uri}'")
    except Exception:
        return False
    return True


def ensure_kafka_connector(spark: SparkSession) -> str:
    """Add Spark's Kafka connector to ``spark`` (once per session) and return its coordinates."""
    key = id(spark)
    if key in _connector_loaded:
        return _connector_loaded[key]
    import pyspark

    candidates = _candidate_versions(pyspark.__version__)
    tried: list[str] = []
    remembered = _remembered(pyspark.__version__)
    if remembered and all(_add_jar(spark, uri) for uri in remembered["uris"]):
        _connector_loaded[key] = str(remembered["coordinates"])
        return _connector_loaded[key]
    for version in candidates:
        full = f"ivy://{CONNECTOR}:{version}"
        tried.append(full)
        if _add_jar(spark, full):
            _connector_loaded[key] = f"{CONNECTOR}:{version}"
            _remember(pyspark.__version__, [full], _connector_loaded[key])
            return _connector_loaded[key]
        without_token = f"ivy://{CONNECTOR}:{version}?exclude={TOKEN_PROVIDER}"
        tried.append(without_token)
        if not _add_jar(spark, without_token):
            continue
        for token_version in candidates[candidates.index(version) :]:
            uri = f"ivy://{TOKEN_PROVIDER}:{token_version}?transitive=false"
            tried.append(uri)
            if _add_jar(spark, uri):
                _connector_loaded[key] = f"{CONNECTOR}:{version} + {TOKEN_PROVIDER}:{token_version}"
                _remember(pyspark.__version__, [without_token, uri], _connector_loaded[key])
                return _connector_loaded[key]
    raise ClusterError(
        f"could not resolve Spark's Kafka connector for PySpark {pyspark.__version__} through Ivy "
        f"(Maven Central or ~/.ivy2 cache); tried: {', '.join(tried)}. Set {VERSION_ENV} to a "
        "version your repository serves."
    )
