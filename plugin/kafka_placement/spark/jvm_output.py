"""Where the JVM behind PySpark writes: a log file instead of the terminal, and the cause when it fails.

PySpark starts its JVM through ``spark-submit`` (:func:`pyspark.java_gateway.launch_gateway`). That process
prints the JDK's and Spark's start-up lines, every log4j line, Ivy's resolution report when a package is
added, and whatever the Python workers it forks write to their stderr. Started here with its stdout and
stderr going to a log file, none of that reaches the terminal; the file keeps it for when something fails.
The user's Spark settings are passed to ``spark-submit`` at launch (settings such as ``spark.driver.memory``
or ``spark.driver.extraJavaOptions`` only take effect there), so a bad one fails here, and
:func:`start_failure` turns what the JVM said into one line naming the file.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from kafka_placement.cache import cache_root
from kafka_placement.errors import SparkStartError

#: Logs kept in the log directory; older ones are removed when a new one is made.
KEEP_LOGS = 20
#: What is read back from a log to find a failure's cause.
_TAIL_BYTES = 256 * 1024

_CAUSE = re.compile(
    r"^(?:Exception in thread \"[^\"]*\" (?P<exception>\S.*)"
    r"|Caused by: (?P<caused>\S.*)"
    r"|(?P<error>(?:Error|ERROR|Invalid|Unrecognized|JAVA_HOME)\b.*)"
    r"|(?P<plain>[\w.$]+(?:Exception|Error): .*))$"
)


def log_dir() -> Path:
    return cache_root() / "logs"


def new_log_path(prefix: str = "spark") -> Path:
    """A new log file's path in :func:`log_dir` (the oldest beyond :data:`KEEP_LOGS` removed)."""
    directory = log_dir()
    directory.mkdir(parents=True, exist_ok=True)
    old = sorted(directory.glob(f"{prefix}-*.log"), key=lambda p: p.stat().st_mtime)
    for stale in old[: max(0, len(old) - KEEP_LOGS + 1)]:
        with contextlib.suppress(OSError):  # another run's file, or gone already
            stale.unlink()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return directory / f"{prefix}-{stamp}-{os.getpid()}.log"


def gateway_running() -> bool:
    """A JVM gateway is up already (this process started one, or it runs under ``spark-submit``)."""
    from pyspark import SparkContext

    return bool(SparkContext._gateway) or "PYSPARK_GATEWAY_PORT" in os.environ  # type: ignore[attr-defined]


def start_gateway(launch_conf: Mapping[str, str], log: Path | None) -> None:
    """Start PySpark's JVM gateway unless one runs: ``launch_conf`` given to ``spark-submit``, its output
    appended to ``log`` (None: the terminal, as PySpark does). A JVM that exits at once raises
    :class:`SparkStartError` with the cause."""
    if gateway_running():
        return
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf(loadDefaults=False)
    for key, value in launch_conf.items():
        conf.set(key, value)
    if log is None:
        try:
            gateway = launch_gateway(conf)  # type: ignore[no-untyped-call]
        except Exception as exc:
            raise start_failure(exc, None) from exc
    else:
        with log.open("ab") as sink:  # the child keeps its own descriptor
            try:
                gateway = launch_gateway(  # type: ignore[no-untyped-call]
                    conf, popen_kwargs={"stdout": sink, "stderr": subprocess.STDOUT}
                )
            except Exception as exc:
                raise start_failure(exc, log) from exc
    SparkContext._ensure_initialized(gateway=gateway)  # type: ignore[attr-defined]


def start_failure(exc: BaseException, log: Path | None) -> SparkStartError:
    """One line for a Spark start that failed: the JVM's own cause (from the log, else the exception)
    and the log's path."""
    cause = _java_cause(exc) or (cause_in_log(log) if log is not None else None) or _first_line(exc)
    where = f" (Spark's output: {log})" if log is not None else ""
    if log is not None:
        try:
            with log.open("a", encoding="utf-8") as sink:
                sink.write(f"\nkafka-placement: Spark did not start: {type(exc).__name__}: {exc}\n")
        except OSError:
            pass
    return SparkStartError(f"Spark did not start: {cause}{where}")


def cause_in_log(log: Path) -> str | None:
    """The first line of the JVM's output that says what failed, or None."""
    try:
        with log.open("rb") as source:
            size = source.seek(0, os.SEEK_END)
            source.seek(max(0, size - _TAIL_BYTES))
            text = source.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    return first_cause(text.splitlines())


def first_cause(lines: list[str]) -> str | None:
    for line in lines:
        match = _CAUSE.match(line.strip())
        if match:
            found = next(group for group in match.groups() if group)
            if "Could not create the Java Virtual Machine" not in found:
                return found[:300]
    return None


def _java_cause(exc: BaseException) -> str | None:
    """The Java exception a Py4J error carries: its line after ``: ``."""
    for line in str(exc).splitlines():
        if line.startswith(": "):
            return line[2:].strip()[:300]
    return None


def _first_line(exc: BaseException) -> str:
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return first[:300]
