"""Finding or downloading the kafka-clients jar whose JSON message schemas kafka-python reads: a local
Maven repository served on loopback stands in for Maven Central."""

from __future__ import annotations

import hashlib
import http.server
import socket
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_placement.clients.kafka_python import message_schemas
from kafka_placement.clients.kafka_python.message_schemas import (
    cached_jar,
    has_schemas,
    kafka_clients_jar,
    schema_package,
)
from kafka_placement.errors import MessageSchemaUnavailableError
from kafka_placement.versions import KAFKA_VERSION

VERSION = "9.9.9"


@pytest.fixture()
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No jar anywhere this machine would look (cache, Java reference cache, ~/.m2)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KAFKA_PLACEMENT_JAVA_CACHE", str(tmp_path / "java"))
    monkeypatch.delenv(message_schemas.REPOSITORY_ENV, raising=False)
    return tmp_path


def make_repository(root: Path, sha1: str | None = None) -> Path:
    folder = root / "repo" / "org" / "apache" / "kafka" / "kafka-clients" / VERSION
    folder.mkdir(parents=True)
    jar = folder / f"kafka-clients-{VERSION}.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("common/message/PingRequest.json", '// a comment\n{"name": "PingRequest"}\n')
        archive.writestr("org/apache/kafka/Nothing.class", b"\xca\xfe\xba\xbe")
    digest = sha1 or hashlib.sha1(jar.read_bytes()).hexdigest()
    (folder / f"{jar.name}.sha1").write_text(f"{digest}  {jar.name}\n")
    return root / "repo"


@pytest.fixture()
def serve() -> Iterator[object]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(directory: Path) -> str:
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args: object, **kwargs: object) -> None:
                super().__init__(*args, directory=str(directory), **kwargs)  # type: ignore[arg-type]

            def log_message(self, *args: object) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_download_checked_and_cached(isolated: Path, serve: object) -> None:
    url = serve(make_repository(isolated))  # type: ignore[operator]
    jar = kafka_clients_jar(VERSION, need=("PingRequest",), repository=url)
    assert jar == cached_jar(VERSION) and has_schemas(jar, "PingRequest")
    # found in the cache afterwards: no repository needed
    assert kafka_clients_jar(VERSION, need=("PingRequest",), repository="http://127.0.0.1:9") == jar
    from kafka.protocol.schemas.load_json import load_json

    assert load_json("PingRequest", package=schema_package(jar)) == {
        "name": "PingRequest",
        "license": "// a comment\n",
    }


def test_checksum_mismatch_is_refused_and_nothing_kept(isolated: Path, serve: object) -> None:
    url = serve(make_repository(isolated, sha1="0" * 40))  # type: ignore[operator]
    with pytest.raises(MessageSchemaUnavailableError, match="does not match the published 0000"):
        kafka_clients_jar(VERSION, repository=url)
    assert not cached_jar(VERSION).exists()
    assert list(cached_jar(VERSION).parent.iterdir()) == []


def test_missing_schema_and_unpublished_version(isolated: Path, serve: object) -> None:
    url = serve(make_repository(isolated))  # type: ignore[operator]
    with pytest.raises(MessageSchemaUnavailableError, match=r"holds no common/message/PongRequest\.json"):
        kafka_clients_jar(VERSION, need=("PongRequest",), repository=url)
    with pytest.raises(MessageSchemaUnavailableError, match="HTTP 404"):
        kafka_clients_jar("9.9.8", repository=url)


def test_offline_is_one_typed_error(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv(message_schemas.REPOSITORY_ENV, f"http://127.0.0.1:{port}")
    with pytest.raises(MessageSchemaUnavailableError, match=r"cannot download http://127\.0\.0\.1:.*refused"):
        kafka_clients_jar(VERSION, timeout_s=10)
    with pytest.raises(MessageSchemaUnavailableError, match=r"MAJOR\.MINOR\.PATCH"):
        kafka_clients_jar("4.4")
    with pytest.raises(MessageSchemaUnavailableError, match="http"):
        kafka_clients_jar(VERSION, repository="file:///etc")


@pytest.mark.parametrize(
    "where",
    [
        # the Java reference jars (scripts/fetch-java-reference.sh) and the broker plugin's, under
        # $XDG_CACHE_HOME/kafka-placement as every cache of ours
        ("java", KAFKA_VERSION, "lib"),
        ("broker-plugin", VERSION, "compile"),
        ("broker-plugin", VERSION, "reference"),
    ],
)
def test_a_jar_in_another_cache_of_ours_is_used_without_a_download(
    isolated: Path, monkeypatch: pytest.MonkeyPatch, where: tuple[str, str, str]
) -> None:
    monkeypatch.delenv("KAFKA_PLACEMENT_JAVA_CACHE")
    cache, version_dir, subset = where
    folder = isolated / "cache" / "kafka-placement" / cache / version_dir / subset
    folder.mkdir(parents=True)
    repository = make_repository(isolated / "jar")
    jar = repository / "org/apache/kafka/kafka-clients" / VERSION / f"kafka-clients-{VERSION}.jar"
    placed = folder / jar.name
    placed.write_bytes(jar.read_bytes())
    assert kafka_clients_jar(VERSION, need=("PingRequest",), repository="http://127.0.0.1:9") == placed
