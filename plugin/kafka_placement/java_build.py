"""Build one of our Java components against the published Kafka jars of the version a user names.

Two components are built this way: the broker plugin (:mod:`kafka_placement.broker_plugin`) and the
client-side failover assignor (:mod:`kafka_placement.client_assignor`). Each has a ``pom.xml`` naming the jars
it compiles against (``-Dkafka.version`` set by us) and a ``java/`` source tree; :class:`JavaBuild` fetches
those jars with ``mvn`` into ``<cache>/<component>/<version>/<subset>/`` once (Maven's own ``~/.m2`` keeps the
downloads), compiles the sources with ``javac --release 17`` and packs only our classes into a jar named for
the version and a digest of the sources, so a changed source or another version never reuses a stale jar.
Every failure is one line in the component's own error type.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_placement.broker_plugin.kafka_version import check_kafka_version
from kafka_placement.cache import cache_root
from kafka_placement.errors import KafkaPlacementError

#: A bound on one Maven run (a cold download of a few jars takes seconds; a dead network must not hang us).
MAVEN_TIMEOUT_S = 300
#: A bound on compiling a handful of small classes.
JAVAC_TIMEOUT_S = 120
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: What Maven says when it cannot reach a repository (no network, offline mode, a plugin never downloaded).
_UNREACHABLE = (
    "offline mode",
    "Could not transfer",
    "Unknown host",
    "No plugin found for prefix",
    "Network is unreachable",
    "Connection refused",
    "Connect timed out",
)


@dataclass(frozen=True)
class JavaBuild:
    """One Java component: where its pom and sources are, what it compiles against, how it names things."""

    #: the directory under the cache root (``broker-plugin``), the jar's prefix (``kafka-placement-broker``)
    cache_name: str
    jar_prefix: str
    #: for messages and the manifest: ``broker plugin``
    title: str
    pom: Path
    source_root: Path
    #: the artifacts compiled against; any other subset is cached apart (test and benchmark jars)
    compile_artifacts: tuple[str, ...]
    #: the artifact named when a version cannot be resolved (the one that exists only for Kafka versions)
    anchor_artifact: str
    unavailable: type[KafkaPlacementError]
    #: sources compiled in besides ``source_root``'s (a class shared with another component, not copied)
    extra_sources: tuple[Path, ...] = ()

    def cache_dir(self, kafka_version: str) -> Path:
        return cache_root() / self.cache_name / check_kafka_version(kafka_version)

    def resolve(self, kafka_version: str, artifacts: Sequence[str] | None = None) -> list[Path]:
        """The jars of ``artifacts`` (default: the compile ones) for ``kafka_version``; fetched once."""
        wanted = tuple(self.compile_artifacts if artifacts is None else artifacts)
        subset = "reference" if set(wanted) - set(self.compile_artifacts) else "compile"
        out = self.cache_dir(kafka_version) / subset
        jars = _jars(out, wanted)
        if jars is not None:
            return jars
        mvn = shutil.which("mvn")
        if mvn is None:
            raise self.unavailable(
                "mvn not found: install Maven (Debian: maven) to fetch Kafka's jars from Maven Central"
            )
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f".{subset}-", dir=out.parent) as tmp:
            command = [
                mvn,
                "-B",
                "-q",
                "-Dstyle.color=never",
                "-f",
                str(self.pom),
                f"-Dkafka.version={kafka_version}",
                "dependency:copy-dependencies",
                "-DexcludeTransitive=true",
                f"-DincludeArtifactIds={','.join(wanted)}",
                f"-DoutputDirectory={tmp}/jars",
            ]
            try:
                result = subprocess.run(
                    command, capture_output=True, text=True, check=False, timeout=MAVEN_TIMEOUT_S
                )
            except subprocess.TimeoutExpired:
                raise self.unavailable(
                    f"Maven took over {MAVEN_TIMEOUT_S} s fetching Kafka {kafka_version}'s jars"
                ) from None
            if result.returncode != 0:
                raise self.unavailable(self._maven_failure(kafka_version, result.stdout + result.stderr))
            staged = Path(tmp, "jars")
            if _jars(staged, wanted) is None:
                raise self.unavailable(f"Maven did not deliver {', '.join(wanted)} for Kafka {kafka_version}")
            shutil.rmtree(out, ignore_errors=True)
            os.replace(staged, out)  # whole or not at all: another process may fetch the same version
        found = _jars(out, wanted)
        assert found is not None
        return found

    def _maven_failure(self, kafka_version: str, output: str) -> str:
        """One line: no network and an unpublished version say so; else Maven's first error line."""
        output = _ANSI.sub("", output)  # Maven colours its ERROR prefix even in batch mode
        if any(sign in output for sign in _UNREACHABLE):
            first = next((line.strip() for line in output.splitlines() if "ERROR" in line), "no ERROR line")
            return (
                f"Maven could not reach its repository to fetch Kafka {kafka_version}'s jars (offline? "
                f"a proxy or a mirror goes in ~/.m2/settings.xml): {first[:200]}"
            )
        # a second attempt is answered from ~/.m2's memory of the first: "... was not found in ... during a
        # previous attempt"
        if (
            any(sign in output for sign in ("Could not find artifact", "was not found in"))
            or "could not be resolved" in output.lower()
        ):
            return (
                f"Kafka {kafka_version} is not on Maven Central (org.apache.kafka:"
                f"{self.anchor_artifact}:{kafka_version} could not be resolved); "
                "name a released version such as 4.4.0"
            )
        errors = [line.strip() for line in output.splitlines() if "ERROR" in line]
        return f"Maven failed fetching Kafka {kafka_version}'s jars: {(errors or ['no output'])[0][:300]}"

    def sources(self) -> list[Path]:
        found = sorted(self.source_root.rglob("*.java"))
        if not found or not all(path.is_file() for path in self.extra_sources):
            # an install without its package data
            raise self.unavailable(f"the {self.title}'s Java sources are missing under {self.source_root}")
        return [*found, *self.extra_sources]

    def jar_name(self, kafka_version: str) -> str:
        """``<prefix>-<version>-<digest>.jar``: the digest covers every source file."""
        digest = hashlib.sha256()
        for source in self.sources():
            inside = source.is_relative_to(self.source_root)
            name = source.relative_to(self.source_root) if inside else Path(source.name)
            digest.update(Path(name).as_posix().encode())
            digest.update(source.read_bytes())
        return f"{self.jar_prefix}-{check_kafka_version(kafka_version)}-{digest.hexdigest()[:12]}.jar"

    def build_jar(self, kafka_version: str, class_path: Callable[[], Sequence[Path]] | None = None) -> Path:
        """The jar for ``kafka_version`` (compiled once; later calls return the cached file), compiled against
        ``class_path()`` (default: :meth:`resolve`), which is asked only when the jar must be built."""
        out = self.cache_dir(kafka_version) / self.jar_name(kafka_version)
        if out.exists():
            return out
        javac = shutil.which("javac")
        if javac is None:
            raise self.unavailable("javac not found: install a JDK 17+ (Debian: openjdk-17-jdk-headless)")
        jars = class_path() if class_path is not None else self.resolve(kafka_version)
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".build-", dir=out.parent) as tmp:
            classes = Path(tmp, "classes")
            command = [
                javac,
                "--release",
                "17",
                "-Xlint:all",
                "-Werror",
                "-d",
                str(classes),
                "-cp",
                os.pathsep.join(map(str, jars)),
                *map(str, self.sources()),
            ]
            try:
                result = subprocess.run(
                    command, capture_output=True, text=True, check=False, timeout=JAVAC_TIMEOUT_S
                )
            except subprocess.TimeoutExpired:
                raise self.unavailable(f"javac took over {JAVAC_TIMEOUT_S} s") from None
            if result.returncode != 0:
                first = (result.stderr.strip().splitlines() or ["no output"])[0]
                raise self.unavailable(f"javac failed against Kafka {kafka_version}'s jars: {first[:300]}")
            staged = Path(tmp, out.name)
            with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as jar:
                jar.writestr(
                    "META-INF/MANIFEST.MF",
                    "Manifest-Version: 1.0\r\n"
                    f"Implementation-Title: kafka-placement {self.title}\r\n"
                    f"Implementation-Version: built for Apache Kafka {kafka_version}\r\n\r\n",
                )
                for path in sorted(classes.rglob("*.class")):
                    jar.write(path, path.relative_to(classes).as_posix())
            os.replace(staged, out)  # whole or not at all: another process may build the same jar
        return out


def add_jar_options(parser: Any, version_help: str) -> None:
    """The options of a command that delivers a component's jar (``broker-plugin``, ``client-assignor``)."""
    parser.add_argument("--kafka-version", required=True, metavar="X.Y.Z", help=version_help)
    parser.add_argument("--out", required=True, metavar="DIR", help="directory the jar is written to")


def deliver_jar(
    command: str, fetches: str, kafka_version: str, out_dir: str, name: str, build: Callable[[str], Path]
) -> Path:
    """A command's delivery of a component: say on stderr that the first build downloads ``fetches``, build
    (or find) the jar and copy it to ``out_dir/<name>-<version>.jar``, the path returned."""
    print(
        f"{command}: building for Apache Kafka {kafka_version} (the first build fetches {fetches} from "
        "Maven Central)",
        file=sys.stderr,
        flush=True,
    )
    target = Path(out_dir) / f"{name}-{kafka_version}.jar"
    shutil.copyfile(build(kafka_version), target)
    return target


def _jars(directory: Path, artifacts: Sequence[str]) -> list[Path] | None:
    """One jar per artifact in ``directory``, or None when any is missing."""
    if not directory.is_dir():
        return None
    jars = sorted(directory.glob("*.jar"))
    found = [
        next((j for j in jars if j.name.startswith(f"{a}-") and j.name[len(a) + 1 :][:1].isdigit()), None)
        for a in artifacts
    ]
    return None if any(j is None for j in found) else [j for j in found if j is not None]
