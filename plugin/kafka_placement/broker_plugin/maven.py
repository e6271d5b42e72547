"""The published Kafka jars a broker plugin is compiled against, fetched from Maven Central with ``mvn``.

``pom.xml`` beside this file names them; :func:`resolve` copies one subset (no transitive dependencies)
into ``<cache>/broker-plugin/<version>/<subset>/`` once; a second call finds them there. Maven itself
keeps its local repository (``~/.m2``), so nothing is downloaded twice either way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from kafka_placement.broker_plugin.kafka_version import check_kafka_version
from kafka_placement.cache import cache_root
from kafka_placement.errors import KafkaPlacementError

POM = Path(__file__).with_name("pom.xml")
#: What the plugin is compiled against (all of it is on every broker's class path already).
COMPILE = ("kafka-group-coordinator-api", "kafka-clients", "slf4j-api")
#: Kafka's own assignors and GroupSpec, for the differential test and the benchmark.
REFERENCE = (*COMPILE, "kafka-group-coordinator", "kafka-coordinator-common", "kafka-server-common")
#: A bound on one Maven run (a cold download of six jars takes seconds; a dead network must not hang us).
MAVEN_TIMEOUT_S = 300


class BrokerPluginUnavailable(KafkaPlacementError, RuntimeError):
    """The jars, Maven or a JDK are missing, or the version is not published; the message says which."""


def cache_dir(kafka_version: str) -> Path:
    return cache_root() / "broker-plugin" / check_kafka_version(kafka_version)


def resolve(kafka_version: str, artifacts: tuple[str, ...] = COMPILE) -> list[Path]:
    """The jars of ``artifacts`` for ``kafka_version`` (fetched on first use)."""
    subset = "reference" if set(artifacts) - set(COMPILE) else "compile"
    out = cache_dir(kafka_version) / subset
    jars = _jars(out, artifacts)
    if jars is not None:
        return jars
    mvn = shutil.which("mvn")
    if mvn is None:
        raise BrokerPluginUnavailable(
            "mvn not found: install Maven (Debian: maven) to fetch Kafka's plugin API jars from Maven Central"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{subset}-", dir=out.parent) as tmp:
        command = [
            mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(POM), f"-Dkafka.version={kafka_version}",
            "dependency:copy-dependencies", "-DexcludeTransitive=true",
            f"-DincludeArtifactIds={','.join(artifacts)}", f"-DoutputDirectory={tmp}/jars",
        ]
        try:
            result = subprocess.run(command, capture_output=True, text=True, check=False,
                                    timeout=MAVEN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BrokerPluginUnavailable(
                f"Maven took over {MAVEN_TIMEOUT_S} s fetching Kafka {kafka_version}'s jars"
            ) from None
        if result.returncode != 0:
            raise BrokerPluginUnavailable(_maven_failure(kafka_version, result.stdout + result.stderr))
        staged = Path(tmp, "jars")
        if _jars(staged, artifacts) is None:
            raise BrokerPluginUnavailable(
                f"Maven did not deliver {', '.join(artifacts)} for Kafka {kafka_version}"
            )
        shutil.rmtree(out, ignore_errors=True)
        os.replace(staged, out)  # whole or not at all: another process may fetch the same version
    found = _jars(out, artifacts)
    assert found is not None
    return found


def _jars(directory: Path, artifacts: tuple[str, ...]) -> list[Path] | None:
    """One jar per artifact in ``directory``, or None when any is missing."""
    if not directory.is_dir():
        return None
    jars = sorted(directory.glob("*.jar"))
    found = [next((j for j in jars if j.name.startswith(f"{a}-") and j.name[len(a) + 1:][:1].isdigit()), None)
             for a in artifacts]
    return None if any(j is None for j in found) else [j for j in found if j is not None]


def _maven_failure(kafka_version: str, output: str) -> str:
    """One line: an unpublished version says so; anything else gives Maven's first error line."""
    if "Could not find artifact" in output or "could not be resolved" in output.lower():
        return (f"Kafka {kafka_version} is not on Maven Central (org.apache.kafka:"
                f"kafka-group-coordinator-api:{kafka_version} could not be resolved); "
                "name a released version such as 4.4.0")
    errors = [line.strip() for line in output.splitlines() if "ERROR" in line]
    return f"Maven failed fetching Kafka {kafka_version}'s jars: {(errors or ['no output'])[0][:300]}"
