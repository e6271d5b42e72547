"""A Spark session for any deployment, and Spark's Kafka connector, resolved through Ivy from Maven Central.

Our defaults keep start-up small for laptops and 2-core CI machines (UI off, a handful of shuffle
partitions, modest driver memory; on a local master the driver binds to loopback only). **The user's
settings always win**: whatever the deployment already says (``spark-defaults.conf``, ``spark-submit
--conf``, read from the JVM once it is up) and what the caller passes in ``conf`` override every default,
``spark.driver.host`` and ``spark.driver.bindAddress`` included. On a cluster master (``spark://…``,
``yarn``, ``k8s://…``) our package is shipped to the executors and checked there first
(:mod:`kafka_placement.spark.executors`).

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

from kafka_placement.cache import cache_root
from kafka_placement.errors import ClusterError
from kafka_placement.spark.executors import check_executors, is_local_master, ship_package
from kafka_placement.spark.jvm_output import start_failure, start_gateway

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCALA_BINARY = "2.13"
CONNECTOR = f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY}"
TOKEN_PROVIDER = f"org.apache.spark:spark-token-provider-kafka-0-10_{SCALA_BINARY}"
#: Environment override: comma-separated connector versions to try, in order.
VERSION_ENV = "KAFKA_PLACEMENT_SPARK_KAFKA_VERSIONS"

#: Only for a local master or one on this machine's loopback: on a cluster the executors must reach the
#: driver by its real address, which Spark finds itself (or the user sets).
LOCAL_ONLY_CONF: dict[str, str] = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}
#: Set to "false" to skip shipping our package to a cluster's executors (it is installed there).
SHIP_CONF = "spark.kafkaPlacement.shipPackage"

DEFAULT_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.driver.memory": "1g",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "262144",
    "spark.sql.session.timeZone": "UTC",
    "spark.python.worker.reuse": "true",
}

_connector_loaded: dict[tuple[int, str], str] = {}


def spark_session(
    master: str | None = "local[*]",
    app_name: str = "kafka-placement",
    conf: dict[str, str] | None = None,
    *,
    jvm_log: Path | None = None,
) -> SparkSession:
    """Get or create a SparkSession: our light defaults, overridden by the deployment's settings and
    then by ``conf``. ``master`` None: the deployment's ``spark.master``, else ``local[*]``. On a
    cluster master the package is shipped to the executors and checked there.

    ``jvm_log``: the JVM this starts writes its output (start-up lines, log4j from WARN, Ivy, the Python
    workers' stderr) to this file instead of the terminal (:mod:`kafka_placement.spark.jvm_output`); a
    JVM already running keeps where it writes. A start that fails raises :class:`SparkStartError` with the
    cause (and the file's path)."""
    user = dict(conf or {})
    # Off unless the user asks: spark-submit turns it on for PySpark, over our default, and its bars
    # overwrite the caller's own lines.
    user.setdefault("spark.ui.showConsoleProgress", "false")
    preset: dict[str, str] | None = None  # read from the JVM, started once
    chosen = master or user.get("spark.master")
    if not chosen:
        preset = _deployment_conf(user, jvm_log)
        chosen = preset.get("spark.master") or "local[*]"
    local = is_local_master(chosen)
    loopback = local or is_loopback_master(chosen)
    if loopback:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if "spark.pyspark.python" in user:
        # PySpark started from Python (not spark-submit) reads only the environment for the workers'
        # interpreter; make the setting mean what it says.
        os.environ["PYSPARK_PYTHON"] = user["spark.pyspark.python"]
    elif local:
        # Python workers must be this interpreter (with kafka_placement importable), not whatever
        # "python3" is first on PATH. On a cluster the workers' interpreter is the deployment's choice.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # PySpark 4.x warns on every pandas conversion that it does not "fully support" pandas 3; the
    # Arrow paths used here (mapInArrow, toPandas of small aggregates) are covered by our tests.
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    from pyspark.sql import SparkSession

    defaults = {**DEFAULT_CONF, **(LOCAL_ONLY_CONF if loopback else {})}
    if preset is None:
        preset = _deployment_conf(user, jvm_log)
    settings = {**defaults, **preset, **user}  # the user's settings always win
    builder: Any = SparkSession.builder.master(chosen).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        spark: SparkSession = builder.getOrCreate()
    except Exception as exc:  # a setting the JVM refuses: its cause, in one line
        raise start_failure(exc, jvm_log) from exc
    # Into a log file WARN and above, for when something fails; on the terminal only errors.
    spark.sparkContext.setLogLevel("WARN" if jvm_log is not None else "ERROR")
    if not local and settings.get(SHIP_CONF, "true").lower() != "false":
        ship_package(spark)
        check_executors(spark)
    return spark


def _deployment_conf(user: dict[str, str], jvm_log: Path | None) -> dict[str, str]:
    """``spark.*`` settings the deployment already gives (spark-defaults.conf, spark-submit --conf):
    the JVM gateway reads them at start, so start it (with the user's settings, which win anyway and
    some of which only act at launch) and ask."""
    from pyspark import SparkConf

    start_gateway(user, jvm_log)
    return {k: v for k, v in SparkConf().getAll() if k != "spark.app.name"}


def is_loopback_master(master: str) -> bool:
    """``spark://127.0.0.1:7077`` or ``spark://localhost:7077``: a cluster on this machine's loopback."""
    from urllib.parse import urlsplit

    if not master.startswith("spark://"):
        return False
    hosts = [urlsplit(f"spark://{part}").hostname or "" for part in master[len("spark://") :].split(",")]
    return all(h == "localhost" or h.startswith("127.") for h in hosts)


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
    return cache_root() / "spark-kafka-connector.json"


def connector_remembered() -> bool:
    """Whether a previous run found which connector resolves here (so it loads from Ivy's cache)."""
    import pyspark

    return _remembered(pyspark.__version__) is not None


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


def session_key(spark: SparkSession) -> tuple[int, str]:
    """What identifies a running session for what was added to it: ``id()`` alone may come back for a
    new session once an old one is gone; its Spark application id does not."""
    return id(spark), str(spark.sparkContext.applicationId)


def ensure_kafka_connector(spark: SparkSession) -> str:
    """Add Spark's Kafka connector to ``spark`` (once per session) and return its coordinates."""
    key = session_key(spark)
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
