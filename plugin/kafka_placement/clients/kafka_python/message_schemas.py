"""Kafka's own JSON message schemas, read at run time from the official ``kafka-clients`` jar, as a
package kafka-python's schema loader can read.

kafka-python 3.0 builds its protocol classes from Kafka's JSON message schemas
(``ApiMessage`` subclasses named like the schema; ``load_json=<package>`` names where the JSON lives) but
ships only some of them: ConsumerGroupDescribe (API key 69) is missing. The same files
(``common/message/<Name>.json``) are inside every ``kafka-clients`` jar Apache publishes, so we read
them from there instead of copying a schema into this project:

* :func:`kafka_clients_jar` finds a copy already on this machine (our cache, the Java reference cache,
  the broker-plugin cache, Maven's ``~/.m2``) or downloads the one jar from Maven Central (or the
  repository named by ``$KAFKA_PLACEMENT_MAVEN_REPOSITORY``), checked against the ``.sha1`` published
  beside it, into ``<cache>/maven/``; bounded in size and time;
* :func:`schema_package` exposes the jar's ``common/message/`` directory through the standard
  ``importlib.resources`` reader protocol, so ``load_json`` reads the JSON straight from the jar.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.util
import os
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from importlib.resources.abc import Traversable, TraversableResources
from pathlib import Path
from types import ModuleType
from typing import IO

from kafka_placement.broker_plugin.maven import cache_dir as broker_plugin_cache
from kafka_placement.cache import cache_root
from kafka_placement.conformance.jars import cache_dir as java_reference_cache
from kafka_placement.errors import InvalidArgumentError, MessageSchemaUnavailableError
from kafka_placement.versions import KAFKA_VERSION

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
#: A Maven repository (mirror) to download from instead of Maven Central.
REPOSITORY_ENV = "KAFKA_PLACEMENT_MAVEN_REPOSITORY"
#: Where the message schemas sit inside ``kafka-clients``.
SCHEMA_DIR = "common/message/"
#: kafka-clients 4.4.0 is 10.9 MB; anything far larger is not the jar we asked for.
MAX_JAR_BYTES = 64 * 1024 * 1024
DOWNLOAD_TIMEOUT_S = 120.0
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_packages: dict[Path, ModuleType] = {}


def _jar_name(version: str) -> str:
    return f"kafka-clients-{version}.jar"


def cached_jar(version: str = KAFKA_VERSION) -> Path:
    """Where a downloaded jar is kept."""
    return cache_root() / "maven" / "org.apache.kafka" / _jar_name(version)


def known_copies(version: str = KAFKA_VERSION) -> list[Path]:
    """Places a ``kafka-clients`` jar of ``version`` may already be on this machine, ours first; each
    of our other caches is asked where it keeps its jars (the names carry the version)."""
    name = _jar_name(version)
    copies = [cached_jar(version), java_reference_cache() / "lib" / name]
    try:
        plugin = broker_plugin_cache(version)
    except InvalidArgumentError:  # before Kafka 4: the broker plugin has no cache for it
        pass
    else:
        copies += [plugin / "compile" / name, plugin / "reference" / name]
    m2 = Path.home() / ".m2" / "repository" / "org" / "apache" / "kafka" / "kafka-clients" / version
    return [*copies, m2 / name]


def has_schemas(jar: Path, *names: str) -> bool:
    """Is ``jar`` a readable zip holding ``common/message/<name>.json`` for every name?"""
    try:
        with zipfile.ZipFile(jar) as archive:
            present = set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
    return all(f"{SCHEMA_DIR}{n}.json" in present for n in names)


def kafka_clients_jar(
    version: str = KAFKA_VERSION,
    *,
    need: tuple[str, ...] = (),
    repository: str | None = None,
    timeout_s: float = DOWNLOAD_TIMEOUT_S,
) -> Path:
    """A ``kafka-clients`` jar of ``version`` holding the schemas ``need``: a local copy, else downloaded."""
    if not _VERSION.match(version):
        raise MessageSchemaUnavailableError(
            f"kafka-clients version must be MAJOR.MINOR.PATCH, got {version!r}"
        )
    for candidate in known_copies(version):
        if candidate.is_file() and has_schemas(candidate, *need):
            return candidate
    jar = download_jar(version, repository=repository, timeout_s=timeout_s)
    if not has_schemas(jar, *need):
        raise MessageSchemaUnavailableError(
            f"{jar} holds no {', '.join(SCHEMA_DIR + n + '.json' for n in need)} "
            f"(Kafka {version} predates it?)"
        )
    return jar


def _fetch(url: str, deadline: float, limit: int, sink: IO[bytes] | None = None) -> bytes:
    """GET ``url`` (at most ``limit`` bytes, before ``deadline``); into ``sink`` when given."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("download deadline passed")
    chunks: list[bytes] = []
    size = 0
    with urllib.request.urlopen(url, timeout=min(remaining, 30.0)) as response:
        while chunk := response.read(1 << 16):
            size += len(chunk)
            if size > limit:
                raise ValueError(f"{url} is larger than {limit} bytes")
            if time.monotonic() > deadline:
                raise TimeoutError("download deadline passed")
            if sink is None:
                chunks.append(chunk)
            else:
                sink.write(chunk)
    return b"".join(chunks)


def download_jar(
    version: str = KAFKA_VERSION, *, repository: str | None = None, timeout_s: float = DOWNLOAD_TIMEOUT_S
) -> Path:
    """Download ``kafka-clients-<version>.jar`` into :func:`cached_jar`, checked against its ``.sha1``."""
    base = (repository or os.environ.get(REPOSITORY_ENV) or MAVEN_CENTRAL).rstrip("/")
    if not base.startswith(("https://", "http://")):
        raise MessageSchemaUnavailableError(f"Maven repository must be an http(s) URL, got {base!r}")
    url = f"{base}/org/apache/kafka/kafka-clients/{version}/{_jar_name(version)}"
    target = cached_jar(version)
    deadline = time.monotonic() + timeout_s
    try:
        published = _fetch(url + ".sha1", deadline, 1024).decode("ascii", "replace").split()
        expected = published[0].lower() if published else ""
        if not re.fullmatch(r"[0-9a-f]{40}", expected):
            raise MessageSchemaUnavailableError(f"{url}.sha1 is not a SHA-1 checksum")
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".download-", delete=False) as sink:
            try:
                _fetch(url, deadline, MAX_JAR_BYTES, sink)
                sink.flush()
                # the checksum Maven publishes beside every artifact is SHA-1
                digest = hashlib.sha1(Path(sink.name).read_bytes()).hexdigest()
                if digest != expected:
                    raise MessageSchemaUnavailableError(
                        f"{url}: SHA-1 {digest} does not match the published {expected}; not used"
                    )
                os.replace(sink.name, target)  # whole or not at all: another process may download too
            finally:
                if Path(sink.name).exists():
                    os.unlink(sink.name)
    except MessageSchemaUnavailableError:
        raise
    except urllib.error.HTTPError as exc:
        raise MessageSchemaUnavailableError(f"cannot download {url}: HTTP {exc.code}") from None
    except urllib.error.URLError as exc:
        raise MessageSchemaUnavailableError(f"cannot download {url}: {exc.reason}") from None
    except (OSError, TimeoutError, ValueError) as exc:
        raise MessageSchemaUnavailableError(f"cannot download {url}: {exc}") from None
    return target


class _JarResources(TraversableResources):
    def __init__(self, jar: Path) -> None:
        self._jar = jar

    def files(self) -> Traversable:
        return zipfile.Path(self._jar, SCHEMA_DIR)


class _JarLoader(importlib.abc.Loader):
    """A package with no code whose resources are the jar's ``common/message/`` files."""

    def __init__(self, jar: Path) -> None:
        self._jar = jar

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        return None

    def get_resource_reader(self, fullname: str) -> TraversableResources:
        return _JarResources(self._jar)


def schema_package(jar: Path) -> ModuleType:
    """A package (registered in ``sys.modules`` under a private name) for ``load_json=`` of kafka-python's
    ``ApiMessage``: it reads ``<Name>.json`` from ``jar``'s ``common/message/``."""
    jar = jar.resolve()
    if jar not in _packages:
        digest = hashlib.sha256(str(jar).encode()).hexdigest()[:12]
        name = f"kafka_placement._kafka_message_schemas_{digest}"
        spec = importlib.util.spec_from_loader(name, _JarLoader(jar), is_package=True)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        _packages[jar] = module
    return _packages[jar]
